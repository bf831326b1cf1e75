/**
 * The `rules` judge: declarative predicates over the response and the next state, for tests,
 * demos and the simulated users. The predicates are the text rules of `text-rule.ts` (regex,
 * maxWords, minWords), each applied to the response text or the next state's text. Rules are tried in order; the first whose conditions all hold gives
 * the score (and its hint, when hints are wanted). No match scores 0.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { minimumHintChars } from '../core/judge-votes.js';
import { ruleHolds, textRuleSchema } from './text-rule.js';
import type { ChatMessage } from '../spec/chat.js';
import type { Judge, JudgeInput, JudgeResult } from '../spec/judge.js';
import type { JudgeVote } from '../spec/records.js';

const conditionSchema = z.object({ on: z.enum(['response', 'nextState']), rule: textRuleSchema });

const ruleSchema = z.object({
  /** Every condition must hold; an empty list always holds (a catch-all). */
  when: z.array(conditionSchema),
  score: z.union([z.literal(1), z.literal(-1), z.literal(0)]),
  hint: z.string().min(minimumHintChars).optional(),
});

export const rulesJudgeSpecSchema = z.object({
  name: z.string().min(1),
  rules: z.array(ruleSchema).min(1),
});

export type RulesJudgeSpec = z.infer<typeof rulesJudgeSpecSchema>;

function messageText(message: ChatMessage): string {
  const calls = (message.toolCalls ?? []).map((call) => `${call.name} ${call.arguments}`);
  return [message.content, ...calls].filter((part) => part !== '').join('\n');
}

/** Reads the next state like the PRM's instructions: corrections and failures, then thanks. */
export const defaultRulesJudgeSpec: RulesJudgeSpec = {
  name: 'default',
  rules: [
    {
      when: [
        {
          on: 'nextState',
          rule: {
            type: 'regex',
            pattern: "\\b(?:no|wrong|redo|again|instead|not what|don't|do not|too (?:long|short|much)|should|error|failed|exception)\\b",
            flags: 'i',
            expect: true,
          },
        },
      ],
      score: -1,
    },
    {
      when: [
        {
          on: 'nextState',
          rule: { type: 'regex', pattern: '\\b(?:thanks?|thank you|great|perfect|awesome|nice|exactly|ok|okay)\\b', flags: 'i', expect: true },
        },
      ],
      score: 1,
    },
  ],
};

export function createRulesJudge(spec: RulesJudgeSpec, clock: () => number = () => performance.now()): Judge {
  const checked = rulesJudgeSpecSchema.parse(spec);
  const digest = createHash('sha256').update(JSON.stringify(checked)).digest('hex').slice(0, 12);
  const promptVersion = `rules-${digest}`;
  const judgeModel = `rules:${checked.name}`;
  return {
    judgeId: 'rules',
    judgeModel,
    promptVersion,
    async judge(input: JudgeInput): Promise<JudgeResult> {
      const started = clock();
      const texts = { response: messageText(input.response), nextState: input.nextState.map(messageText).join('\n') };
      const index = checked.rules.findIndex((rule) => rule.when.every((condition) => ruleHolds(condition.rule, texts[condition.on])));
      const matched = checked.rules[index];
      const score = matched?.score ?? 0;
      const votes: JudgeVote[] = [
        {
          kind: 'verdict',
          text: matched === undefined ? 'no rule matched \\boxed{0}' : `rule ${index} matched \\boxed{${score}}`,
          score,
          hint: null,
          rejection: null,
        },
      ];
      const hint = input.wantHint ? (matched?.hint ?? null) : null;
      if (input.wantHint) {
        votes.push({ kind: 'hint', text: hint ?? 'no hint', score: hint === null ? -1 : 1, hint, rejection: hint === null ? 'missing-hint' : null });
      }
      return { score, votes, hint, hintCandidates: hint === null ? [] : [hint], judgeModel, promptVersion, latencyMs: clock() - started };
    },
  };
}
