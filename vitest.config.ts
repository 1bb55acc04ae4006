import { defaultServerConditions } from "vite"
import { defineConfig } from "vitest/config"

// "source": the package's own entry points resolve to src/*.ts in tests (the
// published entry points are the compiled dist/*.js).
export default defineConfig({
  resolve: { conditions: ["source", ...defaultServerConditions] },
  ssr: { resolve: { conditions: ["source", ...defaultServerConditions] } },
  test: {
    include: ["test/**/*.test.ts"],
    // The AI SDK's dependency eventsource-parser publishes a "source" export
    // pointing at TypeScript; inlined, vite transforms it instead of Node.
    server: { deps: { inline: [/@ai-sdk\//, "eventsource-parser"] } },
    testTimeout: 20_000
  }
})
