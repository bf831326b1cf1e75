/**
 * The judge examples both judge measurements use (one answer, `measure-builtin-model.ts`; the judge
 * the server runs, `measure-deployed-judge.ts`), drawn from the same seeds so their figures read
 * side by side, and how a hint is read against what the user wants.
 */
import { parseStyleHint } from '../../builtin/style-hint.js';
import { createSeededRandom, deriveSeed } from '../../core/seeded-random.js';
import { drawStyle, styleDimensions, type StyleChoice } from '../../builtin/style.js';
import { incoherenceComplaints } from '../../builtin/reply-coherence.js';
import { builtinUsers, userTaskValues, type BuiltinUserName } from '../../builtin/user-preference.js';
import type { ChatMessage } from '../../spec/chat.js';
import { breakReply, replyBreakages, type ReplyBreakage } from '../corpus/broken-replies.js';
import { generateJudgeExample, type JudgeExample, type JudgeExampleInput } from '../corpus/judge-task.js';
import { writeReply } from '../corpus/reply-writer.js';
import { buildTutorTask } from '../corpus/tutor-tasks.js';
import { simulatedUserJudgeExample, type SimulatedUserJudgeExample } from '../corpus/simulated-user-judge-examples.js';

/** A held-out verdict example: a complaint, thanks or neutral follow-up. */
export function heldoutVerdictExample(seed: number | string, index: number): JudgeExample {
  return generateJudgeExample(createSeededRandom(deriveSeed(seed, 'verdict', index)), { split: 'heldout', prompt: 'verdict' });
}

/** A held-out hint-extraction example on a complaint. */
export function heldoutComplaintExample(seed: number | string, index: number): JudgeExample {
  return generateJudgeExample(createSeededRandom(deriveSeed(seed, 'hint', index)), { split: 'heldout', prompt: 'hint', nextKind: 'complaint' });
}

/**
 * A built-in user's `index`th pair: a verdict example (complaints and thanks alternate, each phrase
 * in turn, not drawn: a draw gave one user the same thanks ten times out of ten) and a hint example
 * on its complaints, each in turn.
 */
export function builtinUserExamples(
  seed: number | string,
  name: BuiltinUserName,
  index: number,
): { verdict: SimulatedUserJudgeExample; hint: SimulatedUserJudgeExample } {
  const random = createSeededRandom(deriveSeed(seed, 'users', name, index));
  const verdict = simulatedUserJudgeExample(random, builtinUsers[name], 'verdict', index % 2 === 0, Math.floor(index / 2));
  return { verdict, hint: simulatedUserJudgeExample(random, builtinUsers[name], 'hint', true, index) };
}

/**
 * A broken reply to a held-out task (each breakage in turn) and the personalization experiment's
 * own complaint about it (core/reply-coherence.ts, worded apart from the corpus): the verdict the
 * judge owes is −1.
 */
export function brokenReplyExample(seed: number | string, index: number): { input: JudgeExampleInput; breakage: ReplyBreakage } {
  const random = createSeededRandom(deriveSeed(seed, 'broken', index));
  const breakage = replyBreakages[index % replyBreakages.length] as ReplyBreakage;
  const tutor = buildTutorTask(random.pick(userTaskValues), random, 'heldout');
  const other = buildTutorTask(random.pick(userTaskValues), random, 'heldout');
  const reply = breakReply(random, writeReply(tutor.content, drawStyle(random), random), writeReply(other.content, drawStyle(random), random), breakage);
  const complaints = incoherenceComplaints[breakage];
  const complaint = complaints[Math.floor(index / replyBreakages.length) % complaints.length] as string;
  return {
    input: {
      context: [{ role: 'user', content: tutor.userMessage } satisfies ChatMessage],
      response: { role: 'assistant', content: reply } satisfies ChatMessage,
      nextState: [{ role: 'user', content: complaint } satisfies ChatMessage],
    },
    breakage,
  };
}

/**
 * What a hint asks for against what the user wants: whether it names every wanted dimension (and
 * with the wanted value); `helpful` asks for a wanted value and for no other value of the wanted
 * dimensions, `contrary` for another value of one. No hint is neither.
 */
export function readHint(hint: string | null, wanted: Partial<StyleChoice>): { namesDimensions: boolean; namesValues: boolean; helpful: boolean; contrary: boolean } {
  const named = hint === null ? {} : parseStyleHint(hint);
  const dimensions = styleDimensions.filter((dimension) => wanted[dimension] !== undefined);
  const contrary = dimensions.some((dimension) => named[dimension] !== undefined && named[dimension] !== wanted[dimension]);
  return {
    namesDimensions: dimensions.every((dimension) => named[dimension] !== undefined),
    namesValues: dimensions.every((dimension) => named[dimension] === wanted[dimension]),
    helpful: !contrary && dimensions.some((dimension) => named[dimension] === wanted[dimension]),
    contrary,
  };
}
