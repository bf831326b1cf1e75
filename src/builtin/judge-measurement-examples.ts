/**
 * The judge examples both judge measurements use (one answer, `measure-builtin-model.ts`; the judge
 * the server runs, `measure-deployed-judge.ts`), drawn from the same seeds so their figures read
 * side by side, and how a hint is read against what the user wants.
 */
import { parseStyleHint } from '../core/hint.js';
import { createSeededRandom, deriveSeed } from '../core/seeded-random.js';
import { styleDimensions, type StyleChoice } from '../core/style.js';
import { builtinUsers, type BuiltinUserName } from '../core/user-preference.js';
import { generateJudgeExample, type JudgeExample } from './corpus/judge-task.js';
import { simulatedUserJudgeExample, type SimulatedUserJudgeExample } from './corpus/simulated-user-judge-examples.js';

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
