import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInferenceEngineContract } from '../inference-engine.contract.js';
import { createPeftAdapterFiles } from '../testing/create-peft-adapter-files.js';
import { startFakeVllmServer, type FakeServerMode } from '../testing/fake-vllm-server.js';
import { createTestChatRenderer } from '../testing/test-chat-renderer.js';
import type { ChatFlavor } from './chat-completions-api.js';
import { createOpenAICompatibleEngine } from './create-openai-compatible-engine.js';
import { defaultMaxLoadedAdapters } from './policy-registry.js';

function adapterArtifact(version: number) {
  return { version, kind: 'adapter' as const, files: createPeftAdapterFiles({ baseModel: 'fake-model', seed: version }) };
}

function contractFor(flavor: ChatFlavor, mode: FakeServerMode, extra: { incrementalStreamOutput?: boolean; label?: string } = {}): void {
  const exact = flavor !== 'openai';
  runInferenceEngineContract({
    name: `openai-compatible ${flavor}${extra.label ?? ''} against the fake ${mode} server`,
    capabilities: { tokenIds: exact, scoring: exact, temperatureScoring: false, policyLoading: exact, forcedToolChoice: flavor !== 'sglang', responseFormats: flavor !== 'sglang' ? ['json_object', 'json_schema'] : [], toolCalls: true },
    createPolicyArtifact: adapterArtifact,
    takesArtifactSource: exact,
    ...(exact ? { residentAdapters: defaultMaxLoadedAdapters } : {}),
    createEngine: async () => {
      // Paced so an abort lands while tokens are still being produced; the server holds as many adapters as the engine keeps.
      const server = await startFakeVllmServer({ mode, tokensPerSecond: 2000, incrementalStreamOutput: extra.incrementalStreamOutput === true, autoToolChoice: true, maxLoadedAdapters: defaultMaxLoadedAdapters });
      const adapterDirectory = exact ? await mkdtemp(join(tmpdir(), 'clawrl-adapters-')) : undefined;
      const engine = createOpenAICompatibleEngine({
        baseUrl: server.url,
        model: 'fake-model',
        flavor,
        timeoutMs: 5000,
        ...(flavor === 'sglang' ? { renderer: createTestChatRenderer() } : {}),
        ...(adapterDirectory === undefined ? {} : { adapterDirectory }),
      });
      return {
        engine,
        close: async () => {
          await engine.close();
          await server.close();
          if (adapterDirectory !== undefined) await rm(adapterDirectory, { recursive: true, force: true });
        },
      };
    },
  });
}

contractFor('vllm', 'vllm');
contractFor('sglang', 'sglang');
contractFor('sglang', 'sglang', { incrementalStreamOutput: true, label: ' (incremental streaming output)' });
contractFor('openai', 'plain');
