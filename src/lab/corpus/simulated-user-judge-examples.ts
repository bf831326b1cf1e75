/**
 * Judge examples on the built-in simulated users' own words (core/user-preference.ts): a held-out
 * task of the user's kind, a reply that breaks the user's preference answered with one of its
 * complaints, or one that keeps it answered with one of its thanks. These words are in neither
 * corpus split, so they measure the judge as the personalization experiment meets it.
 */
import { parseStyleHint } from '../../builtin/style-hint.js';
import { buildHintPrompt, buildJudgePrompt } from '../../core/judge-prompts.js';
import { builtinJudgePromptBudget } from '../../builtin/builtin-judge-options.js';
import type { VoteScore } from '../../core/rl/aggregate-votes.js';
import type { SeededRandom } from '../../core/seeded-random.js';
import { drawStyle, type StyleChoice } from '../../builtin/style.js';
import { complaintsFor, satisfiesPreference, type SimulatedUser } from '../../builtin/user-preference.js';
import type { ChatMessage } from '../../spec/chat.js';
import type { JudgeExampleInput, JudgePromptKind } from './judge-task.js';
import { writeReply } from './reply-writer.js';
import { buildTutorTask } from './tutor-tasks.js';

export interface SimulatedUserJudgeExample {
  /** The judge prompt, without an answer. */
  messages: ChatMessage[];
  /** What the prompt was built from. */
  input: JudgeExampleInput;
  prompt: JudgePromptKind;
  complaint: boolean;
  expectedScore: VoteScore;
  /** What the user's own hint asks for: the values a good judge hint names. */
  wanted: Partial<StyleChoice>;
}

/**
 * `phraseIndex` picks the complaint or thanks (modulo their count) instead of a random one, so a
 * measurement can give each of the user's phrases the same weight.
 */
export function simulatedUserJudgeExample(
  random: SeededRandom,
  user: SimulatedUser,
  prompt: JudgePromptKind,
  complaint: boolean,
  phraseIndex?: number,
): SimulatedUserJudgeExample {
  const tutor = buildTutorTask(user.task, random, 'heldout');
  let reply = writeReply(tutor.content, drawStyle(random), random);
  // Rejection sampling: a reply that breaks the preference for complaints, keeps it for thanks.
  for (let attempt = 0; attempt < 200 && satisfiesPreference(user.preference, reply) === complaint; attempt += 1) {
    reply = writeReply(tutor.content, drawStyle(random), random);
  }
  const input = {
    context: [{ role: 'user', content: tutor.userMessage } satisfies ChatMessage],
    response: { role: 'assistant', content: reply } satisfies ChatMessage,
    nextState: [{ role: 'user', content: phraseOf(random, complaint ? complaintsFor(user, reply) : user.thanks, phraseIndex) } satisfies ChatMessage],
  };
  const expectedScore: VoteScore = prompt === 'hint' ? (complaint ? 1 : -1) : complaint ? -1 : 1;
  return {
    messages: prompt === 'verdict' ? buildJudgePrompt(input, builtinJudgePromptBudget) : buildHintPrompt(input, builtinJudgePromptBudget),
    input,
    prompt,
    complaint,
    expectedScore,
    wanted: parseStyleHint(user.hint),
  };
}

function phraseOf(random: SeededRandom, phrases: readonly string[], index: number | undefined): string {
  return index === undefined ? random.pick(phrases) : (phrases[index % phrases.length] as string);
}
