import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fitWithinWindow, fittedReplyRoom } from '../../model/fit-prompt.js';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import { agentClientNames, parseAgentFirstRequest, readAgentFirstRequest, withQuestion } from './agent-first-requests.js';

const shippedModel = path.join(import.meta.dirname, '..', '..', '..', 'models', 'builtin-tiny');

describe('the captured first requests', () => {
  it.each(agentClientNames)('%s: the question survives fitting to the built-in model\'s window, in place of the captured one', async (client) => {
    const request = await readAgentFirstRequest(client);
    expect(request.client).toBe(client);
    const question = 'Ana has 17 shells and finds 25 more. How many shells does Ana have now?';
    const messages = withQuestion(request, question);
    expect(JSON.stringify(messages)).not.toContain(request.question);
    expect(messages.filter((message) => message.content.includes(question))).toHaveLength(1);
    const renderer = await loadChatRenderer(shippedModel);
    const { tokenIds, wholeTokens } = fitWithinWindow(renderer, messages, request.tools, 1024, fittedReplyRoom(1024));
    // An agent's prompt is far longer than the window: this is the fitted prompt the measure is about.
    expect(wholeTokens).toBeGreaterThan(1024);
    expect(tokenIds.length).toBeLessThanOrEqual(512);
    expect(renderer.decode(tokenIds)).toContain(question);
  });

  it('refuses a fixture whose question is in no user message', () => {
    expect(() => parseAgentFirstRequest({ client: 'codex', capturedWith: 'x', capturedAt: 'y', question: 'What is 2 + 3?', messages: [{ role: 'user', content: 'Hello' }], tools: [] })).toThrow(/no user message/);
  });
});
