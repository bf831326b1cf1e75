/**
 * The built-in model measured as the judge the server runs, not as one answer: the PRM judge of
 * `judge/create-prm-judge.ts` with its defaults (three verdict votes and three hint answers at
 * 0.6, the majority verdict, hints that ask for a change the reply lacks, the hint most votes agree
 * on). A single answer at 0.6 (`measure-builtin-model.ts`, `judge`) says how sharp the model is;
 * this says what the RL loop gets from it. The one step left out is the worker's top-k overlap
 * choice between disagreeing hints, which needs a recorded turn to score; the provisional choice
 * (the agreed hint, else the longest) stands in for it.
 *
 * The examples are those of the single-answer figures (same seeds), so the two read side by side.
 */
import { parseStyleHint } from '../core/hint.js';
import { createSeededRandom, deriveSeed } from '../core/seeded-random.js';
import { styleDimensions, type StyleChoice } from '../core/style.js';
import { builtinUserNames, builtinUsers, type BuiltinUserName } from '../core/user-preference.js';
import type { Judge } from '../spec/judge.js';
import { generateJudgeExample } from './corpus/judge-task.js';
import { simulatedUserJudgeExample } from './corpus/simulated-user-judge-examples.js';

export interface Rate {
  rate: number;
  count: number;
}

export interface DeployedJudgeMeasurement {
  /** Majority verdict equal to the right score, per next-state kind and in all. */
  verdictAccuracy: Rate;
  verdictByKind: Record<string, Rate>;
  /** On complaints: the chosen hint names every violated dimension / with the wanted value. */
  hintNamesDimension: Rate;
  hintNamesWantedValue: Rate;
  /** On complaints: the judge gave a hint at all. */
  hintGiven: Rate;
  /** The built-in users' own words, as in the single-answer figures. */
  builtinUsersVerdictByUser: Record<BuiltinUserName, { complaints: Rate; thanks: Rate }>;
  builtinUsersHintByUser: Record<BuiltinUserName, { helpful: Rate; contrary: Rate }>;
}

export interface MeasureDeployedJudgeOptions {
  judge: Judge;
  /** Examples per figure: verdicts, complaints for hints; a fifth of it per built-in user. */
  examples: number;
  seed: number | string;
  log?: (line: string) => void;
}

interface Counter {
  hits: number;
  count: number;
}

const counter = (): Counter => ({ hits: 0, count: 0 });
const rateOf = (tally: Counter): Rate => ({ rate: tally.count === 0 ? 0 : tally.hits / tally.count, count: tally.count });
const add = (tally: Counter, hit: boolean): void => {
  tally.count += 1;
  if (hit) tally.hits += 1;
};

/** What a chosen hint asks for against what the user wants. */
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

export async function measureDeployedJudge(options: MeasureDeployedJudgeOptions): Promise<DeployedJudgeMeasurement> {
  const { judge, examples, seed } = options;
  const log = options.log ?? (() => undefined);
  const signal = new AbortController().signal;

  const verdict = counter();
  const verdictByKind: Record<string, Counter> = {};
  for (let index = 0; index < examples; index += 1) {
    const example = generateJudgeExample(createSeededRandom(deriveSeed(seed, 'verdict', index)), { split: 'heldout', prompt: 'verdict' });
    const result = await judge.judge({ ...example.input, wantHint: false }, signal);
    const right = result.score === example.expectedScore;
    add(verdict, right);
    add((verdictByKind[example.nextKind] ??= counter()), right);
    if ((index + 1) % 25 === 0) log(`deployed judge verdicts: ${index + 1}/${examples}`);
  }

  const namesDimension = counter();
  const namesValue = counter();
  const given = counter();
  for (let index = 0; index < examples; index += 1) {
    const example = generateJudgeExample(createSeededRandom(deriveSeed(seed, 'hint', index)), { split: 'heldout', prompt: 'hint', nextKind: 'complaint' });
    const result = await judge.judge({ ...example.input, wantHint: true }, signal);
    const read = readHint(result.hint, example.wanted);
    add(given, result.hint !== null);
    add(namesDimension, read.namesDimensions);
    add(namesValue, read.namesValues);
    if ((index + 1) % 25 === 0) log(`deployed judge hints: ${index + 1}/${examples}`);
  }

  const usersVerdict = {} as Record<BuiltinUserName, { complaints: Counter; thanks: Counter }>;
  const usersHint = {} as Record<BuiltinUserName, { helpful: Counter; contrary: Counter }>;
  for (const name of builtinUserNames) {
    const verdicts = (usersVerdict[name] = { complaints: counter(), thanks: counter() });
    const hints = (usersHint[name] = { helpful: counter(), contrary: counter() });
    for (let index = 0; index < examples / 5; index += 1) {
      const random = createSeededRandom(deriveSeed(seed, 'users', name, index));
      // The examples of the single-answer figures: complaints and thanks alternate for the verdict,
      // each phrase in turn; every complaint in turn for the hint.
      const complaint = index % 2 === 0;
      const verdictExample = simulatedUserJudgeExample(random, builtinUsers[name], 'verdict', complaint, Math.floor(index / 2));
      const judged = await judge.judge({ ...verdictExample.input, wantHint: false }, signal);
      add(complaint ? verdicts.complaints : verdicts.thanks, judged.score === verdictExample.expectedScore);
      const hintExample = simulatedUserJudgeExample(random, builtinUsers[name], 'hint', true, index);
      const read = readHint((await judge.judge({ ...hintExample.input, wantHint: true }, signal)).hint, hintExample.wanted);
      add(hints.helpful, read.helpful);
      add(hints.contrary, read.contrary);
    }
    log(`deployed judge on the built-in users: ${name} done`);
  }

  const mapRates = <K extends string, T extends Record<string, Counter>>(record: Record<K, T>): Record<K, { [F in keyof T]: Rate }> =>
    Object.fromEntries(
      Object.entries<T>(record).map(([key, tallies]) => [key, Object.fromEntries(Object.entries(tallies).map(([field, tally]) => [field, rateOf(tally)]))]),
    ) as Record<K, { [F in keyof T]: Rate }>;
  return {
    verdictAccuracy: rateOf(verdict),
    verdictByKind: Object.fromEntries(Object.entries(verdictByKind).map(([kind, tally]) => [kind, rateOf(tally)])),
    hintNamesDimension: rateOf(namesDimension),
    hintNamesWantedValue: rateOf(namesValue),
    hintGiven: rateOf(given),
    builtinUsersVerdictByUser: mapRates(usersVerdict),
    builtinUsersHintByUser: mapRates(usersHint),
  };
}
