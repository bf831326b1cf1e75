/**
 * Writes an agent CLI's first request, as the server recorded it, as the fixture the agent-prompt
 * measure reads (`src/lab/measure/agent-first-requests.ts`), scrubbed of what names this machine
 * or run: temporary folders and the home folder become `/home/user`, ids that change each run
 * (UUIDs, long hex) become fixed ones, the host and user names go.
 */
import { writeFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { ChatMessage, ToolDefinition } from '../../src/spec/chat.js';
import { agentFirstRequestsFolder, parseAgentFirstRequest, type AgentClientName } from '../../src/lab/measure/agent-first-requests.js';

export const captureAgentRequests = process.env.CLAWRL_CAPTURE_AGENT_REQUESTS === '1';

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The scrubbed text: run-specific folders, ids and names replaced. */
export function scrubbed(text: string): string {
  let result = text
    .replace(/\/tmp\/clawrl-agent-home-[A-Za-z0-9]+/g, '/home/user')
    .replace(/\/tmp\/clawrl-agent-(?:workspace|bin)-[A-Za-z0-9]+/g, '/home/user/project')
    // The home folder as a path, not the word (`<root>` tags, "the root cause").
    .replace(/(?<![<\w])\/root(?=[/"'\s]|$)/gm, '/home/user')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '00000000-0000-4000-8000-000000000000')
    .replace(/\b(?:sk|key|token)-[A-Za-z0-9_-]{8,}/g, 'secret-scrubbed');
  // Names that are also common words (root) are left: replacing them would rewrite the prompt's prose.
  for (const name of [hostname(), userInfo().username].filter((value) => value.length >= 4 && !['user', 'root', 'admin'].includes(value))) {
    result = result.replace(new RegExp(`\\b${escaped(name)}\\b`, 'g'), 'machine');
  }
  return result;
}

export function writeAgentFirstRequest(options: {
  client: AgentClientName;
  capturedWith: string;
  question: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
}): string {
  const fixture = JSON.parse(
    scrubbed(JSON.stringify({ client: options.client, capturedWith: options.capturedWith, capturedAt: new Date().toISOString().slice(0, 10), question: options.question, messages: options.messages, tools: options.tools })),
  ) as unknown;
  const file = fileURLToPath(new URL(`${options.client}.json`, agentFirstRequestsFolder));
  writeFileSync(file, `${JSON.stringify(parseAgentFirstRequest(fixture), null, 2)}\n`);
  return file;
}
