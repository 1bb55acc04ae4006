/**
 * A `ChildProcessSpawner` over `node:child_process`, just enough for
 * effect's MCP stdio transport: effect 4.1 ships the service but its Node
 * implementation lives in `@effect/platform-node`, which loopwork does not
 * depend on. It runs one plain command (no shell, no pipelines, no extra file
 * descriptors), with the environment it is given and nothing more.
 *
 * A command that cannot start (no such file, no permission) fails `spawn`
 * with a `PlatformError`; a process still running when the spawn's scope
 * closes (after the transport's own shutdown steps) is killed (SIGKILL).
 *
 * @internal
 */
import { spawn as spawnChild } from "node:child_process"
import type { ChildProcess as NodeChild } from "node:child_process"
import { Deferred, Duration, Effect, Layer, PlatformError, Redacted, Sink, Stream } from "effect"
import type { ChildProcess } from "effect/process"
import { ChildProcessSpawner } from "effect/process"

const failure = (method: string, cause: unknown): PlatformError.PlatformError =>
  PlatformError.systemError({
    _tag: "Unknown",
    module: "ChildProcess",
    method,
    description: cause instanceof Error ? cause.message : String(cause),
    cause
  })

const plain = (word: string | Redacted.Redacted<string>): string => typeof word === "string" ? word : Redacted.value(word)

/** The environment of the child: exactly the command's `env` (this spawner never adds `process.env`). */
const environment = (options: ChildProcess.CommandOptions): Record<string, string> => {
  const env: Record<string, string> = Object.create(null)
  for (const [name, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[name] = plain(value)
  return env
}

/** Starts `command`, resolving once Node reports it spawned (or failing with why it could not). */
const start = (command: ChildProcess.StandardCommand): Effect.Effect<NodeChild, PlatformError.PlatformError> =>
  Effect.callback<NodeChild, PlatformError.PlatformError>((resume) => {
    let child: NodeChild
    try {
      child = spawnChild(command.command, command.args.map(plain), {
        cwd: command.options.cwd,
        env: environment(command.options),
        stdio: ["pipe", "pipe", "pipe"],
        windowsHide: true
      })
    } catch (cause) {
      return resume(Effect.fail(failure("spawn", cause)))
    }
    const onError = (cause: unknown) => resume(Effect.fail(failure("spawn", cause)))
    child.once("error", onError)
    child.once("spawn", () => {
      child.off("error", onError)
      // Later errors surface through the write callbacks, the streams and the exit code; unheard,
      // an EPIPE on stdin (a write racing the child's exit) would end this process.
      child.on("error", () => {})
      child.stdin?.on("error", () => {})
      resume(Effect.succeed(child))
    })
  })

const stdinSink = (child: NodeChild): Sink.Sink<void, Uint8Array, never, PlatformError.PlatformError> =>
  Sink.forEach((chunk: Uint8Array) =>
    Effect.callback<void, PlatformError.PlatformError>((resume) => {
      if (child.stdin === null || child.stdin.destroyed) return resume(Effect.fail(failure("stdin", "stdin is closed")))
      child.stdin.write(chunk, (error) => resume(error ? Effect.fail(failure("stdin", error)) : Effect.void))
    })
  ).pipe(Sink.ensuring(Effect.sync(() => child.stdin?.end())))

const output = (readable: NodeJS.ReadableStream | null, name: string): Stream.Stream<Uint8Array, PlatformError.PlatformError> =>
  readable === null
    ? Stream.empty
    : Stream.fromAsyncIterable(readable as AsyncIterable<Uint8Array>, (cause) => failure(name, cause))

const running = (child: NodeChild): boolean => child.exitCode === null && child.signalCode === null

/** A handle on a started child; `exited` completes with its exit code (-1 when a signal ended it). */
const handle = (child: NodeChild, exited: Deferred.Deferred<ChildProcessSpawner.ExitCode>) => {
  const exitCode = Deferred.await(exited)
  const kill = (options?: ChildProcess.KillOptions) =>
    Effect.gen(function*() {
      if (!running(child)) return
      child.kill(options?.killSignal ?? "SIGTERM")
      const after = options?.forceKillAfter === undefined ? undefined : Duration.fromInput(options.forceKillAfter)
      if (after === undefined || after._tag === "None") return
      const done = yield* Effect.timeoutOption(exitCode, after.value)
      if (done._tag === "None" && running(child)) child.kill("SIGKILL")
    })
  const stdout = output(child.stdout, "stdout")
  const stderr = output(child.stderr, "stderr")
  return ChildProcessSpawner.makeHandle({
    pid: ChildProcessSpawner.ProcessId(child.pid ?? -1),
    exitCode,
    isRunning: Effect.sync(() => running(child)),
    kill,
    stdin: stdinSink(child),
    stdout,
    stderr,
    all: Stream.merge(stdout, stderr),
    getInputFd: () => Sink.drain,
    getOutputFd: () => Stream.empty,
    unref: Effect.sync(() => {
      child.unref()
      return Effect.sync(() => {
        child.ref()
      })
    })
  })
}

/** SIGKILL for a child still running when its scope closes, then its exit awaited (a second at most). */
const release = (child: NodeChild, exited: Deferred.Deferred<ChildProcessSpawner.ExitCode>) =>
  Effect.suspend(() => {
    if (!running(child)) return Effect.void
    child.kill("SIGKILL")
    return Effect.ignore(Effect.timeoutOption(Deferred.await(exited), Duration.seconds(1)))
  })

const spawn = (command: ChildProcess.Command) =>
  Effect.gen(function*() {
    if (command._tag !== "StandardCommand") {
      return yield* Effect.fail(
        PlatformError.badArgument({ module: "ChildProcess", method: "spawn", description: "only a plain command can run an MCP server" })
      )
    }
    const exited = yield* Deferred.make<ChildProcessSpawner.ExitCode>()
    const child = yield* Effect.acquireRelease(start(command), (child) => release(child, exited))
    const settle = (code: number | null) => Deferred.doneUnsafe(exited, Effect.succeed(ChildProcessSpawner.ExitCode(code ?? -1)))
    if (running(child)) child.once("exit", settle)
    else settle(child.exitCode)
    return handle(child, exited)
  })

/**
 * The spawner as a layer.
 *
 * @internal
 */
export const layer: Layer.Layer<ChildProcessSpawner.ChildProcessSpawner> = Layer.succeed(
  ChildProcessSpawner.ChildProcessSpawner,
  ChildProcessSpawner.make(spawn)
)
