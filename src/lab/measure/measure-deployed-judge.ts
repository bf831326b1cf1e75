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
import { builtinUserNames, type BuiltinUserName } from '../../builtin/user-preference.js';
import type { Judge } from '../../spec/judge.js';
import { brokenReplyExample, builtinUserExamples, heldoutComplaintExample, heldoutVerdictExample, readHint } from './judge-measurement-examples.js';
import { counter, rateOf, tally, type Counter, type Rate } from './tally.js';

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
  /**
   * The personalization experiment's complaints about broken replies (cut off, looping, off-task)
   * read as −1; a fifth of `examples`. Absent from measurements before 2026-12-04.
   */
  brokenReplyComplaints?: Rate;
}

export interface MeasureDeployedJudgeOptions {
  judge: Judge;
  /** Examples per figure: verdicts, complaints for hints; a fifth of it per built-in user. */
  examples: number;
  seed: number | string;
  log?: (line: string) => void;
}

export async function measureDeployedJudge(options: MeasureDeployedJudgeOptions): Promise<DeployedJudgeMeasurement> {
  const { judge, examples, seed } = options;
  const log = options.log ?? (() => undefined);
  const signal = new AbortController().signal;

  const verdict = counter();
  const verdictByKind: Record<string, Counter> = {};
  for (let index = 0; index < examples; index += 1) {
    const example = heldoutVerdictExample(seed, index);
    const result = await judge.judge({ ...example.input, wantHint: false }, signal);
    const right = result.score === example.expectedScore;
    tally(verdict, right);
    tally((verdictByKind[example.nextKind] ??= counter()), right);
    if ((index + 1) % 25 === 0) log(`deployed judge verdicts: ${index + 1}/${examples}`);
  }

  const namesDimension = counter();
  const namesValue = counter();
  const given = counter();
  for (let index = 0; index < examples; index += 1) {
    const example = heldoutComplaintExample(seed, index);
    const result = await judge.judge({ ...example.input, wantHint: true }, signal);
    const read = readHint(result.hint, example.wanted);
    tally(given, result.hint !== null);
    tally(namesDimension, read.namesDimensions);
    tally(namesValue, read.namesValues);
    if ((index + 1) % 25 === 0) log(`deployed judge hints: ${index + 1}/${examples}`);
  }

  const usersVerdict = {} as Record<BuiltinUserName, { complaints: Counter; thanks: Counter }>;
  const usersHint = {} as Record<BuiltinUserName, { helpful: Counter; contrary: Counter }>;
  for (const name of builtinUserNames) {
    const verdicts = (usersVerdict[name] = { complaints: counter(), thanks: counter() });
    const hints = (usersHint[name] = { helpful: counter(), contrary: counter() });
    for (let index = 0; index < examples / 5; index += 1) {
      const pair = builtinUserExamples(seed, name, index);
      const judged = await judge.judge({ ...pair.verdict.input, wantHint: false }, signal);
      tally(pair.verdict.complaint ? verdicts.complaints : verdicts.thanks, judged.score === pair.verdict.expectedScore);
      const read = readHint((await judge.judge({ ...pair.hint.input, wantHint: true }, signal)).hint, pair.hint.wanted);
      tally(hints.helpful, read.helpful);
      tally(hints.contrary, read.contrary);
    }
    log(`deployed judge on the built-in users: ${name} done`);
  }

  const broken = counter();
  for (let index = 0; index < examples / 5; index += 1) {
    const example = brokenReplyExample(seed, index);
    tally(broken, (await judge.judge({ ...example.input, wantHint: false }, signal)).score === -1);
  }
  log('deployed judge on broken replies: done');

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
    brokenReplyComplaints: rateOf(broken),
  };
}
