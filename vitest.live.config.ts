import { defineConfig } from 'vitest/config';

// Tests against real remote engines (vLLM, SGLang, OpenAI-compatible). Each file skips itself
// unless its endpoint variable (for example CLAWRL_LIVE_VLLM_URL) is set.
export default defineConfig({
  test: { include: ['src/**/*.live.test.ts', 'test/**/*.live.test.ts'], testTimeout: 120_000 },
});
