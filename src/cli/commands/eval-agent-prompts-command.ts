/**
 * `clawrl eval agent-prompts [--model-dir dir] [--questions n] [--samples n] [--json] [--out dir]`:
 * the built-in model (or another model folder) on the first requests the real agent CLIs send,
 * with held-out arithmetic questions in place of theirs, fitted to the window as the gateway fits
 * them, against the same questions asked plainly (`lab/measure/measure-agent-prompts.ts`). It loads
 * the model in this process, as `pretrain-tiny` trains one: no server is needed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { defaultAgentPromptsOptions, formatAgentPromptsMeasurement, measureAgentPrompts, type AgentPromptsMeasurement } from '../../lab/measure/measure-agent-prompts.js';
import { agentClientNames, type AgentClientName } from '../../lab/measure/agent-first-requests.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { initializeTensorBackend } from '../../tensor/initialize-tensor-backend.js';
import { builtinModelDirectory } from '../wiring/create-inference-engine.js';
import { integerOption } from './eval-command.js';

export interface EvalAgentPromptsOptions {
  modelDir?: string;
  questions?: string;
  samples?: string;
  temperature?: string;
  clients?: string;
  out?: string;
}

function clientsOf(list: string | undefined): AgentClientName[] {
  if (list === undefined) return [...agentClientNames];
  const names = list.split(',').map((name) => name.trim());
  for (const name of names) {
    if (!(agentClientNames as readonly string[]).includes(name)) {
      throw new ClawrlError('configuration_error', `--clients: unknown client ${JSON.stringify(name)} (known: ${agentClientNames.join(', ')})`, { param: 'clients' });
    }
  }
  return names as AgentClientName[];
}

export async function runEvalAgentPromptsCommand(options: EvalAgentPromptsOptions, log: (line: string) => void): Promise<AgentPromptsMeasurement> {
  const temperature = options.temperature === undefined ? defaultAgentPromptsOptions.temperature : Number(options.temperature);
  if (!(Number.isFinite(temperature) && temperature >= 0)) throw new ClawrlError('configuration_error', `--temperature must be a number ≥ 0, got ${options.temperature}`, { param: 'temperature' });
  const clients = clientsOf(options.clients);
  await initializeTensorBackend({ backend: 'wasm' });
  const result = await measureAgentPrompts({
    ...defaultAgentPromptsOptions,
    modelDirectory: path.resolve(options.modelDir ?? builtinModelDirectory),
    ...(options.questions === undefined ? {} : { questions: integerOption('questions', options.questions, 1) }),
    ...(options.samples === undefined ? {} : { samplesPerQuestion: integerOption('samples', options.samples, 1) }),
    temperature,
    clients,
    log,
  });
  if (options.out !== undefined) {
    mkdirSync(options.out, { recursive: true });
    writeFileSync(path.join(options.out, 'agent-prompts.json'), `${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(path.join(options.out, 'agent-prompts.txt'), `${formatAgentPromptsMeasurement(result)}\n`);
  }
  return result;
}
