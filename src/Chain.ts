/**
 * The loop's state: an immutable chain of messages plus what the loop needs
 * to decide its next move.
 *
 * A chain holds the conversation (`effect/ai` `Prompt` messages), the last
 * model response, the tool calls still to run, the last round's tool results,
 * `runCount` (model calls made), `failureCount` (consecutive tool rounds with
 * a failure), per-mode state and your own context. Its toolkit travels with it
 * but is not part of its serialized form: `encode` writes a versioned JSON
 * document, `decode` reads it back and re-attaches the toolkit you pass.
 *
 * `run` is the entry point: it runs a chain in a mode and ends in `Ok` or
 * `Pause`, or fails with a `RunError` that carries the chain.
 *
 * Bad input from JSON or JavaScript never throws. Where it is checked:
 *
 * - `make` checks every option fully (a Schema) but, being synchronous,
 *   cannot fail: given a wrongly shaped value it returns a chain that holds
 *   the problem in place of its messages;
 * - `run` and `stream` report that problem, and check the chain's shape
 *   (messages, toolkit, context) and every option, failing with a `RunError`
 *   whose reason is an `InvalidInput` naming the field, before any model call;
 * - `encode` fails with a `ChainCodecError` naming the field for the same
 *   problems in what it stores (the toolkit is not stored, so not checked);
 * - `addUser` given a non-string appends the problem the same way.
 *
 * @since 0.1.0
 */
export {
  Chain,
  type Fields,
  isChain,
  type Json,
  ModelResponse
} from "./internal/chain.ts"
export { addUser, make, type MakeOptions, text } from "./internal/chainInput.ts"
export { decode, type DecodeOptions, encode } from "./internal/chainCodec.ts"
export {
  ChainCodecError,
  Document,
  type EncodeOptions,
  formatVersion,
  type SigningKey
} from "./internal/chainDocument.ts"
export { type HandlersOf, run, type RunOptions, stream, type StreamOptions } from "./internal/run.ts"
