/**
 * Request bodies shaped like real agent traffic: OpenClaw's ~40 KB system prompt and 12 tool
 * schemas (about 11k tokens), a conversation that grows turn by turn and quotes the server's
 * previous reply, and small one-message requests. Deterministic, so every target of a benchmark
 * run receives the same bytes.
 */

const filler =
  'You are a personal assistant running inside OpenClaw. Use tools when they help, keep answers short, ' +
  'respect the workspace rules, never reveal secrets, and ask before destructive actions. ';

const systemPrompt = (() => {
  const sections: string[] = [];
  for (let index = 0; sections.join('\n').length < 40_000; index += 1) {
    sections.push(`## Section ${index}\n${filler.repeat(3)}`);
  }
  return sections.join('\n');
})();

const tools = Array.from({ length: 12 }, (_, index) => ({
  type: 'function',
  function: {
    name: `tool_${index}`,
    description: `Tool number ${index}: ${filler}`,
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'A path inside the workspace' },
        query: { type: 'string', description: 'What to look for' },
        limit: { type: 'integer', minimum: 1, maximum: 100 },
      },
      required: ['path'],
    },
  },
}));

export type RequestShape = 'small' | 'agent';

/** One virtual user's conversation; `next()` returns the body of its next request. */
export interface Conversation {
  next(stream: boolean): string;
  /** Feeds the server's reply so the next request quotes it, as an agent does. */
  reply(text: string): void;
}

export function createConversation(shape: RequestShape, name: string, turnsPerSession = 8): Conversation {
  let messages: Array<Record<string, unknown>> = [];
  let turn = 0;
  let session = 0;
  return {
    next(stream) {
      if (shape === 'small') {
        return JSON.stringify({ model: 'bench-model', stream, max_tokens: 64, messages: [{ role: 'user', content: `${name}: what is ${turn++} + 1?` }] });
      }
      if (turn % turnsPerSession === 0) {
        session += 1;
        messages = [{ role: 'system', content: systemPrompt }];
      }
      turn += 1;
      messages.push({ role: 'user', content: `[${name} session ${session}] request number ${turn}: please check the workspace.` });
      const context = { role: 'user', content: [{ type: 'text', text: `<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>> turn ${turn}` }] };
      return JSON.stringify({
        model: 'bench-model',
        stream,
        ...(stream ? { stream_options: { include_usage: true } } : {}),
        max_completion_tokens: 256,
        tools,
        tool_choice: 'auto',
        messages: [...messages, context],
      });
    },
    reply(text) {
      if (shape === 'agent') messages.push({ role: 'assistant', content: text });
    },
  };
}
