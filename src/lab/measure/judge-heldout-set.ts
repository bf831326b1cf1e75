/**
 * The judge's held-out next states (`models/builtin-tiny/judge-heldout.jsonl`, shipped with the
 * model, or a user's own file of the same shape): one judged turn a line — the request, the reply,
 * what came next (a user message or a tool result) — with the verdict the judge owes and a kind
 * label. They are written apart from the built-in model's training corpus (no next state shares a
 * five-word run with what the corpus generator writes; `judge-heldout-set.test.ts` checks it), so
 * they measure whether the judge reads complaints, corrections, thanks and tool results it has never
 * seen, not whether it remembers its training sentences.
 */
import { z } from 'zod';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { ChatMessage } from '../../spec/chat.js';
import type { JudgeExampleInput } from '../corpus/judge-task.js';

/** The kinds of the shipped file; a user's own file may use other labels. */
export const shippedHeldoutKinds = [
  'correction',
  'complaint',
  'complaint-with-thanks',
  'negated-praise',
  'tool-error',
  'thanks',
  'negated-complaint',
  'moving-on',
  'tool-success',
] as const;

const toolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.string() });
const messageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string(),
  toolCalls: z.array(toolCallSchema).optional(),
  toolCallId: z.string().optional(),
  name: z.string().optional(),
});
const rowSchema = z.object({
  id: z.string().min(1),
  kind: z.string().min(1),
  expected: z.union([z.literal(-1), z.literal(0), z.literal(1)]),
  context: z.array(messageSchema),
  response: messageSchema,
  nextState: z.array(messageSchema).min(1),
});

export interface HeldoutNextState {
  id: string;
  kind: string;
  /** The majority verdict the judge owes: −1, 0 or +1. */
  expected: -1 | 0 | 1;
  input: JudgeExampleInput;
}

function message(parsed: z.infer<typeof messageSchema>): ChatMessage {
  return {
    role: parsed.role,
    content: parsed.content,
    ...(parsed.toolCalls === undefined ? {} : { toolCalls: parsed.toolCalls }),
    ...(parsed.toolCallId === undefined ? {} : { toolCallId: parsed.toolCallId }),
    ...(parsed.name === undefined ? {} : { name: parsed.name }),
  };
}

/** The rows of a held-out file's text; a bad line is a configuration error naming the line. */
export function parseHeldoutNextStates(text: string, source: string): HeldoutNextState[] {
  const rows: HeldoutNextState[] = [];
  const seen = new Set<string>();
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    let parsed: z.infer<typeof rowSchema>;
    try {
      parsed = rowSchema.parse(JSON.parse(line));
    } catch (error) {
      const reason = error instanceof z.ZodError ? z.prettifyError(error) : error instanceof Error ? error.message : String(error);
      throw new ClawrlError('configuration_error', `${source} line ${index + 1} is not a held-out next state ({id, kind, expected, context, response, nextState}): ${reason}`, { param: 'heldout', cause: error });
    }
    if (seen.has(parsed.id)) throw new ClawrlError('configuration_error', `${source} line ${index + 1}: the id ${JSON.stringify(parsed.id)} is used twice.`, { param: 'heldout' });
    seen.add(parsed.id);
    rows.push({
      id: parsed.id,
      kind: parsed.kind,
      expected: parsed.expected,
      input: { context: parsed.context.map(message), response: message(parsed.response), nextState: parsed.nextState.map(message) },
    });
  });
  if (rows.length === 0) throw new ClawrlError('configuration_error', `${source} holds no held-out next states.`, { param: 'heldout' });
  return rows;
}

/** A next state as one line of text: the user's words, or `tool <name>: <result>`. */
export function nextStateText(row: HeldoutNextState): string {
  return row.input.nextState.map((entry) => (entry.role === 'tool' ? `tool ${entry.name ?? ''}: ${entry.content}` : entry.content)).join(' | ');
}
