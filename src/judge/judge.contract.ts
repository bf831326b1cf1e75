/**
 * What every `Judge` promises (`src/spec/judge.ts`), whatever it reads a turn with: a verdict in
 * range or null, expected outcomes as data (unreadable votes, a turn with no next state, a reply
 * that is only tool calls), hints only when asked and only among its candidates, its identity on
 * every result, and the turn left as it was given. Infrastructure failures are thrown, as
 * `ClawrlError`s, so the worker retries the turn.
 *
 * Implementation-agnostic: each implementation says how to build a judge that reads the contract's
 * turn a given way (`JudgePlan`): a PRM judge with a scripted judge model answering so, a rules
 * judge with a rule scoring so.
 */
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../spec/chat.js';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { Judge, JudgeInput, JudgeResult } from '../spec/judge.js';

/** How the judge is to read the contract's turn. */
export interface JudgePlan {
  /** Its verdict; `unreadable`: no vote it can read (only for judges that can have one). */
  verdict: 1 | -1 | 0 | 'unreadable';
  /** The hint it gives when hints are wanted; null: none. */
  hint: string | null;
}

export interface JudgeContractOptions {
  name: string;
  /** A judge that reads any turn of the contract as `plan` says. */
  createJudge: (plan: JudgePlan) => Judge;
  /** Whether its votes can be unreadable (a language model's can; rules always read). */
  canBeUnreadable: boolean;
  /** A judge whose backend fails, where it has one that can. */
  createFailingJudge?: () => Judge;
}

const signal = new AbortController().signal;
const hint = 'Give the sum as a single number, 5, and nothing else.';
const turn: JudgeInput = {
  context: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is 2 + 3?' }],
  response: { role: 'assistant', content: 'It is 6.' },
  nextState: [{ role: 'user', content: 'No, that is wrong. Try again.' }],
  wantHint: false,
};
const scores = [1, -1, 0, null];

/** What holds of every result, whatever the plan. */
function expectWellFormed(judge: Judge, input: JudgeInput, result: JudgeResult): void {
  expect(scores).toContain(result.score);
  expect(result.judgeModel).toBe(judge.judgeModel);
  expect(result.promptVersion).toBe(judge.promptVersion);
  expect(Number.isFinite(result.latencyMs) && result.latencyMs >= 0).toBe(true);
  expect(result.votes.length).toBeGreaterThan(0);
  for (const vote of result.votes) expect(scores).toContain(vote.score);
  // Verdicts first, then hint answers.
  const kinds = result.votes.map((vote) => vote.kind);
  expect(kinds).toEqual([...kinds].sort((a, b) => (a === b ? 0 : a === 'verdict' ? -1 : 1)));
  if (!input.wantHint) {
    expect(result).toMatchObject({ hint: null, hintCandidates: [] });
    expect(kinds).not.toContain('hint');
  }
  if (result.hint !== null) expect(result.hintCandidates).toContain(result.hint);
}

export function runJudgeContract(options: JudgeContractOptions): void {
  describe(`Judge contract: ${options.name}`, () => {
    const judgeOf = async (plan: JudgePlan, input: JudgeInput = turn) => {
      const judge = options.createJudge(plan);
      const before = structuredClone(input);
      const result = await judge.judge(input, signal);
      expect(input, 'the judge leaves its input as it was').toEqual(before);
      expectWellFormed(judge, input, result);
      return result;
    };

    it('names itself, and its model and prompt version on every result', () => {
      const judge = options.createJudge({ verdict: 1, hint: null });
      for (const name of [judge.judgeId, judge.judgeModel, judge.promptVersion]) expect(name).toMatch(/\S/);
    });

    it('gives the verdict it reads, in range, with the votes it read it from', async () => {
      for (const verdict of [1, -1, 0] as const) {
        const result = await judgeOf({ verdict, hint: null });
        expect(result.score, `verdict ${verdict}`).toBe(verdict);
        expect(result.votes.some((vote) => vote.kind === 'verdict' && vote.score === verdict)).toBe(true);
      }
    });

    it.runIf(options.canBeUnreadable)('returns unreadable votes as data: a null score, the raw votes kept', async () => {
      const result = await judgeOf({ verdict: 'unreadable', hint: null });
      expect(result.score).toBeNull();
      expect(result.votes.filter((vote) => vote.kind === 'verdict').every((vote) => vote.score === null && vote.text !== undefined)).toBe(true);
    });

    it('gives a hint only when asked, and then the one it makes, among its candidates', async () => {
      const unasked = await judgeOf({ verdict: -1, hint });
      expect(unasked.hint).toBeNull();
      const asked = await judgeOf({ verdict: -1, hint }, { ...turn, wantHint: true });
      expect(asked.hint).toBe(hint);
      // One candidate per hint answer that gave it.
      expect(asked.hintCandidates.length).toBeGreaterThan(0);
      expect(new Set(asked.hintCandidates)).toEqual(new Set([hint]));
      expect(asked.votes.some((vote) => vote.kind === 'hint' && vote.hint === hint)).toBe(true);
      const none = await judgeOf({ verdict: -1, hint: null }, { ...turn, wantHint: true });
      expect(none).toMatchObject({ hint: null, hintCandidates: [] });
      // Asked and not given: the hint answers say why.
      expect(none.votes.filter((vote) => vote.kind === 'hint').every((vote) => vote.hint === null && vote.rejection !== null)).toBe(true);
    });

    it('judges a turn with no next state, and a reply that is only tool calls, as data', async () => {
      const bare = await judgeOf({ verdict: 0, hint: null }, { ...turn, nextState: [], wantHint: true });
      expect(bare.score).toBe(0);
      const toolCall: ChatMessage = { role: 'assistant', content: '', toolCalls: [{ id: 'call-1', name: 'add', arguments: '{"a":2,"b":3}' }] };
      const next: ChatMessage[] = [{ role: 'tool', toolCallId: 'call-1', name: 'add', content: '5' }];
      expect((await judgeOf({ verdict: 1, hint: null }, { ...turn, response: toolCall, nextState: next })).score).toBe(1);
    });

    it.runIf(options.createFailingJudge !== undefined)('throws a ClawrlError when its backend fails, so the turn is retried', async () => {
      const failing = options.createFailingJudge?.();
      await expect(failing?.judge(turn, signal)).rejects.toSatisfy((error: unknown) => ClawrlError.isInstance(error));
    });
  });
}
