import { defaultServerConditions } from "vite"
import { defineConfig } from "vitest/config"

// "loopwork-source": the package's own entry points resolve to src/*.ts in
// tests (the published entry points are the compiled dist/*.js). The name is
// the project's own: some dependencies publish TypeScript under "source".
export default defineConfig({
  resolve: { conditions: ["loopwork-source", ...defaultServerConditions] },
  ssr: { resolve: { conditions: ["loopwork-source", ...defaultServerConditions] } },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000
  }
})
