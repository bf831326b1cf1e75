/**
 * The first request each real agent CLI sends, as the gateway received it (the domain messages and
 * tools of the recorded turn), kept as fixtures in `__fixtures__/agent-first-requests/` and
 * re-captured by the CLI e2e test (`CLAWRL_CAPTURE_AGENT_REQUESTS=1`, test/agent-clis.e2e.test.ts).
 * The measure puts another question in place of the captured one, inside whatever the client
 * wrapped it in (a timestamp, a runtime line, context blocks), so the prompt stays the client's.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { ChatMessage, ToolDefinition } from '../../spec/chat.js';
import { ClawrlError } from '../../spec/clawrl-error.js';

export const agentClientNames = ['openclaw', 'claude-code', 'codex'] as const;
export type AgentClientName = (typeof agentClientNames)[number];

const messageSchema = z.looseObject({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string(),
});

export const agentFirstRequestSchema = z.object({
  client: z.enum(agentClientNames),
  /** The CLI and version that sent it. */
  capturedWith: z.string(),
  capturedAt: z.string(),
  /** The question the e2e test asked; it appears in exactly one user message. */
  question: z.string().min(1),
  messages: z.array(messageSchema).min(1),
  tools: z.array(z.looseObject({ name: z.string() })),
});

export interface AgentFirstRequest {
  client: AgentClientName;
  capturedWith: string;
  capturedAt: string;
  question: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
}

/** Where the fixtures are, from this module's folder in src/ or its compiled twin in dist/. */
export const agentFirstRequestsFolder = new URL('../../../src/lab/measure/__fixtures__/agent-first-requests/', import.meta.url);

export function parseAgentFirstRequest(value: unknown): AgentFirstRequest {
  const parsed = agentFirstRequestSchema.parse(value);
  questionIndex(parsed as AgentFirstRequest);
  return parsed as AgentFirstRequest;
}

export async function readAgentFirstRequest(client: AgentClientName, folder: URL = agentFirstRequestsFolder): Promise<AgentFirstRequest> {
  const text = await readFile(new URL(`${client}.json`, folder), 'utf8');
  return parseAgentFirstRequest(JSON.parse(text));
}

/** The index of the user message holding the question: the last one that does. */
function questionIndex(request: AgentFirstRequest): number {
  for (let index = request.messages.length - 1; index >= 0; index -= 1) {
    const message = request.messages[index] as ChatMessage;
    if (message.role === 'user' && message.content.includes(request.question)) return index;
  }
  throw new ClawrlError('invalid_request', `the ${request.client} fixture has no user message with its question ${JSON.stringify(request.question)}`);
}

/** The request's messages with `question` asked in place of the captured one. */
export function withQuestion(request: AgentFirstRequest, question: string): ChatMessage[] {
  const index = questionIndex(request);
  return request.messages.map((message, position) =>
    position === index ? { ...message, content: message.content.replace(request.question, () => question) } : message,
  );
}
