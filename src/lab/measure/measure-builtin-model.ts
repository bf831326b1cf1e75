/**
 * Measures the built-in model against the acceptance figures of its issue, on held-out prompts
 * (names and next-state phrasings the training split never uses):
 * - hint following: share of replies whose classified style has the hinted value, per dimension;
 * - without a hint: how often each value of each dimension appears;
 * - well-formed: a non-empty reply that ends with the end-of-turn token within the token budget;
 * - as a judge: verdict accuracy (`\boxed{}` equal to the right score) and, on complaints, how often
 *   the extracted hint names every violated dimension (and with the wanted value), for one answer
 *   and for the judge the server runs (`deployedJudge`: its votes, see measure-deployed-judge.ts);
 * - arithmetic: the stated final answer of `solve` replies equals the problem's answer.
 *
 * Style replies are sampled at temperature 1 (the distribution the RL sampler explores and the
 * one the no-hint frequencies are about); judge answers at 0.6, the judge's vote temperature.
 */
import { performance } from 'node:perf_hooks';
import { createSeededRandom, deriveSamplingSeed, deriveSeed } from '../../core/seeded-random.js';
import { createPrmJudge } from '../../judge/create-prm-judge.js';
import { builtinJudgeOptions } from '../../builtin/builtin-judge-options.js';
import { parseHintResponse, parseVote } from '../../core/judge-votes.js';
import { classifyStyle, styleDimensions, styleValues, type StyleDimension } from '../../builtin/style.js';
import { builtinUserNames, userTaskValues, type BuiltinUserName } from '../../builtin/user-preference.js';
import { loadChatRenderer } from '../../model/create-chat-renderer.js';
import { loadTransformerFromFolder } from '../../model/transformer.js';
import type { ChatMessage } from '../../spec/chat.js';
import { generateExample, type StyleExample } from '../corpus/corpus-generator.js';
import { builtinUserExamples, heldoutComplaintExample, heldoutVerdictExample, readHint } from './judge-measurement-examples.js';
import { measureDeployedJudge, type DeployedJudgeMeasurement } from './measure-deployed-judge.js';
import { sampleReplies, transformerJudgeModel, type Reply } from './sample-replies.js';
import { counter, rateOf, tally, type Counter, type Rate } from './tally.js';

export interface MeasureBuiltinModelOptions {
  modelDirectory: string;
  /** Held-out prompts per style measurement (with hints, without hints). */
  prompts: number;
  /** Replies sampled per style prompt (batched, so cheaper than more prompts). */
  samplesPerPrompt: number;
  /** Judge examples per prompt kind (verdict, hint extraction on complaints). */
  judgeExamples: number;
  /** Also measure the judge as the server runs it (six answers a turn, so the slowest part). */
  deployedJudge: boolean;
  seed: number | string;
  styleTemperature: number;
  judgeTemperature: number;
  maxTokens: number;
  log?: (line: string) => void;
}

export const defaultMeasureOptions: Omit<MeasureBuiltinModelOptions, 'modelDirectory'> = {
  prompts: 100,
  samplesPerPrompt: 2,
  judgeExamples: 100,
  deployedJudge: true,
  seed: 'measure',
  styleTemperature: 1,
  judgeTemperature: 0.6,
  maxTokens: 320,
};

export interface BuiltinModelMeasurement {
  modelDirectory: string;
  settings: Omit<MeasureBuiltinModelOptions, 'modelDirectory' | 'log'>;
  timings: { loadSeconds: number; firstTokenSeconds: number; sampleTokensPerSecond: number };
  hintFollowing: Record<StyleDimension, Rate> & { all: Rate };
  /** Per dimension and hinted value, how many replies came out in each value: where following fails. */
  hintFollowingByValue: { [D in StyleDimension]: Record<string, Record<string, number>> };
  noHintFrequencies: { [D in StyleDimension]: Record<string, number> } & { replies: number };
  wellFormed: Rate & { endsWithEndOfTurn: number };
  judge: {
    verdictAccuracy: Rate;
    verdictByKind: Record<string, Rate>;
    hintNamesDimension: Rate;
    hintNamesWantedValue: Rate;
    hintAccepted: Rate;
    /** On the built-in simulated users' own complaints and thanks. */
    builtinUsersVerdict: Rate;
    builtinUsersVerdictByUser: Record<BuiltinUserName, { complaints: Rate; thanks: Rate }>;
    builtinUsersHintNamesDimension: Rate;
    /**
     * Per user, on its complaints: `helpful` hints ask for a value the user wants and for no other
     * value of the dimensions it cares about; `contrary` ones ask for another value of such a
     * dimension ("put the answer in \\boxed{}" for "nobody boxes their answer"), which trains the
     * policy away from the user. A complaint may name one of several wanted dimensions, so a
     * helpful hint need not name them all.
     */
    builtinUsersHintByUser: Record<BuiltinUserName, { helpful: Rate; contrary: Rate }>;
  };
  /** The judge the server runs, on the same examples; null when not measured. */
  deployedJudge: DeployedJudgeMeasurement | null;
  arithmetic: Rate;
  acceptance: {
    hintFollowingAtLeast90: boolean;
    noHintValuesWithin20To80: boolean;
    wellFormedAtLeast98: boolean;
    judgeVerdictAtLeast90: boolean;
    judgeHintNamesDimensionAtLeast80: boolean;
    /** The same two bars for the judge the server runs; null when it was not measured. */
    deployedJudgeVerdictAtLeast90: boolean | null;
    deployedJudgeHintNamesDimensionAtLeast80: boolean | null;
  };
}

/** Hits (replies in the hinted value) and count of one dimension's tally, hinted value → value it came out in → replies. */
function followingOf(tally: Record<string, Record<string, number>>): Counter {
  let hits = 0;
  let count = 0;
  for (const [wanted, outcomes] of Object.entries(tally)) {
    for (const [actual, replies] of Object.entries(outcomes)) {
      count += replies;
      if (actual === wanted) hits += replies;
    }
  }
  return { hits, count };
}

const round = (value: number): number => Math.round(value * 1000) / 1000;

/** The final answer a reply states: the boxed value, else the `Answer:` line, else its last number. */
export function statedAnswer(text: string): number | null {
  const plain = text.replace(/\*\*/g, '').replace(/,(?=\d{3})/g, '');
  const boxed = [...plain.matchAll(/\\boxed\{\s*\$?(-?\d+(?:\.\d+)?)\s*\}/g)].at(-1);
  if (boxed !== undefined) return Number(boxed[1]);
  const line = [...plain.matchAll(/^[ \t]*Answer:[ \t]*\$?(-?\d+(?:\.\d+)?)/gim)].at(-1);
  if (line !== undefined) return Number(line[1]);
  const numbers = [...plain.matchAll(/-?\d+(?:\.\d+)?/g)].at(-1);
  return numbers === undefined ? null : Number(numbers[0]);
}

function styleExample(seed: number | string, kind: string, index: number, withHint: boolean): StyleExample {
  const random = createSeededRandom(deriveSeed(seed, kind, index));
  const task = userTaskValues[index % userTaskValues.length] ?? 'solve';
  return generateExample(random, { split: 'heldout', task, hintProbability: withHint ? 1 : 0 }) as StyleExample;
}

export async function measureBuiltinModel(options: MeasureBuiltinModelOptions): Promise<BuiltinModelMeasurement> {
  const log = options.log ?? (() => undefined);
  const loadStarted = performance.now();
  const renderer = await loadChatRenderer(options.modelDirectory);
  const transformer = await loadTransformerFromFolder(options.modelDirectory, { trainParams: 'full' });
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  try {
    const firstStarted = performance.now();
    await transformer.sample({
      promptTokenIds: renderer.renderPrompt([{ role: 'user', content: 'Tom has 3 boxes with 4 pens each. How many pens does Tom have?' }], []),
      maxTokens: 1,
      temperature: 1,
      seed: 1,
    });
    const firstTokenSeconds = (performance.now() - firstStarted) / 1000;

    let sampledTokens = 0;
    let samplingSeconds = 0;
    const wellFormed = counter();
    let endedWithEndOfTurn = 0;
    const arithmetic = counter();
    const record = (example: StyleExample, reply: Reply): void => {
      wellFormed.count += 1;
      if (reply.endedWithEndOfTurn) endedWithEndOfTurn += 1;
      if (reply.endedWithEndOfTurn && reply.text.trim() !== '' && !reply.text.includes('<|im_start|>')) wellFormed.hits += 1;
      if (example.task === 'solve') {
        arithmetic.count += 1;
        if (statedAnswer(reply.text) === example.answer) arithmetic.hits += 1;
      }
    };
    const styleReplies = async (example: StyleExample, index: number): Promise<Reply[]> => {
      const started = performance.now();
      const result = await sampleReplies(
        transformer,
        renderer,
        example.messages.slice(0, -1),
        options.samplesPerPrompt,
        options.styleTemperature,
        options.maxTokens,
        deriveSamplingSeed(options.seed, 'sample', index),
      );
      samplingSeconds += (performance.now() - started) / 1000;
      sampledTokens += result.tokens;
      for (const reply of result.replies) record(example, reply);
      return result.replies;
    };

    const byValue = Object.fromEntries(styleDimensions.map((dimension) => [dimension, {}])) as BuiltinModelMeasurement['hintFollowingByValue'];
    for (let index = 0; index < options.prompts; index += 1) {
      const example = styleExample(options.seed, 'hinted', index, true);
      for (const reply of await styleReplies(example, index)) {
        const actual = classifyStyle(reply.text);
        for (const dimension of styleDimensions) {
          const wanted = example.hinted[dimension];
          if (wanted === undefined) continue;
          const outcomes = (byValue[dimension][wanted] ??= {});
          outcomes[actual[dimension]] = (outcomes[actual[dimension]] ?? 0) + 1;
        }
      }
      if ((index + 1) % 20 === 0) log(`hinted prompts: ${index + 1}/${options.prompts}`);
    }

    const valueCounts = Object.fromEntries(styleDimensions.map((dimension) => [dimension, {} as Record<string, number>])) as Record<StyleDimension, Record<string, number>>;
    let noHintReplies = 0;
    for (let index = 0; index < options.prompts; index += 1) {
      const example = styleExample(options.seed, 'plain', index, false);
      for (const reply of await styleReplies(example, options.prompts + index)) {
        noHintReplies += 1;
        const actual = classifyStyle(reply.text);
        for (const dimension of styleDimensions) {
          const counts = valueCounts[dimension];
          counts[actual[dimension]] = (counts[actual[dimension]] ?? 0) + 1;
        }
      }
      if ((index + 1) % 20 === 0) log(`plain prompts: ${index + 1}/${options.prompts}`);
    }
    const noHintFrequencies = Object.fromEntries(
      styleDimensions.map((dimension) => {
        const values = [...(styleValues[dimension] as readonly string[]), ...(dimension === 'length' ? ['medium'] : [])];
        return [dimension, Object.fromEntries(values.map((value) => [value, round((valueCounts[dimension][value] ?? 0) / Math.max(1, noHintReplies))]))];
      }),
    ) as { [D in StyleDimension]: Record<string, number> };

    const judgeAnswer = async (prompt: ChatMessage[], index: number): Promise<string> => {
      const [reply] = (
        await sampleReplies(transformer, renderer, prompt, 1, options.judgeTemperature, 96, deriveSamplingSeed(options.seed, 'judge', index))
      ).replies;
      return reply?.text ?? '';
    };
    const verdict = counter();
    const verdictByKind: Record<string, Counter> = {};
    for (let index = 0; index < options.judgeExamples; index += 1) {
      const example = heldoutVerdictExample(options.seed, index);
      const right = parseVote(await judgeAnswer(example.messages.slice(0, -1), index)).score === example.expectedScore;
      tally(verdict, right);
      tally((verdictByKind[example.nextKind] ??= counter()), right);
      if ((index + 1) % 25 === 0) log(`judge verdicts: ${index + 1}/${options.judgeExamples}`);
    }
    const namesDimension = counter();
    const namesValue = counter();
    const accepted = counter();
    for (let index = 0; index < options.judgeExamples; index += 1) {
      const example = heldoutComplaintExample(options.seed, index);
      const parsed = parseHintResponse(await judgeAnswer(example.messages.slice(0, -1), options.judgeExamples + index));
      const read = readHint(parsed.hint, example.wanted);
      tally(accepted, parsed.accepted);
      tally(namesDimension, read.namesDimensions);
      tally(namesValue, read.namesValues);
      if ((index + 1) % 25 === 0) log(`judge hints: ${index + 1}/${options.judgeExamples}`);
    }

    // The built-in users' own complaints and thanks, as the personalization experiment meets them.
    const usersVerdict = counter();
    const usersHintNames = counter();
    // Per user and kind: a misread thanks turns a satisfied user into negative reward, which one
    // overall rate hides behind the complaints it reads right.
    const usersVerdictByUser = Object.fromEntries(
      builtinUserNames.map((name) => [name, { complaints: counter(), thanks: counter() }]),
    ) as Record<BuiltinUserName, { complaints: Counter; thanks: Counter }>;
    const usersHintByUser = Object.fromEntries(
      builtinUserNames.map((name) => [name, { helpful: counter(), contrary: counter() }]),
    ) as Record<BuiltinUserName, { helpful: Counter; contrary: Counter }>;
    let userIndex = 0;
    for (const name of builtinUserNames) {
      for (let index = 0; index < options.judgeExamples / 5; index += 1) {
        const pair = builtinUserExamples(options.seed, name, index);
        const right = parseVote(await judgeAnswer(pair.verdict.messages, 2 * options.judgeExamples + userIndex++)).score === pair.verdict.expectedScore;
        tally(usersVerdict, right);
        tally(usersVerdictByUser[name][pair.verdict.complaint ? 'complaints' : 'thanks'], right);
        const parsed = parseHintResponse(await judgeAnswer(pair.hint.messages, 2 * options.judgeExamples + userIndex++));
        const read = readHint(parsed.hint, pair.hint.wanted);
        tally(usersHintNames, read.namesDimensions);
        tally(usersHintByUser[name].helpful, read.helpful);
        tally(usersHintByUser[name].contrary, read.contrary);
      }
      log(`judge on the built-in users: ${name} done`);
    }

    const deployedJudge = options.deployedJudge
      ? await measureDeployedJudge({
          judge: createPrmJudge({
            judgeId: 'policy',
            modelName: options.modelDirectory,
            model: transformerJudgeModel(transformer, renderer),
            ...builtinJudgeOptions({ grounding: false }),
          }),
          examples: options.judgeExamples,
          seed: options.seed,
          log,
        })
      : null;

    // The rates are read off the per-value tally: a reply follows its hint where it came out in the hinted value.
    const following = Object.fromEntries(styleDimensions.map((dimension) => [dimension, followingOf(byValue[dimension])])) as Record<StyleDimension, Counter>;
    const allHinted = Object.values(following).reduce((sum, one) => ({ hits: sum.hits + one.hits, count: sum.count + one.count }), counter());
    const hintFollowing = {
      ...(Object.fromEntries(styleDimensions.map((dimension) => [dimension, rateOf(following[dimension])])) as Record<StyleDimension, Rate>),
      all: rateOf(allHinted),
    };
    const wellFormedRate = rateOf(wellFormed);
    const judge = {
      verdictAccuracy: rateOf(verdict),
      verdictByKind: Object.fromEntries(Object.entries(verdictByKind).map(([kind, counter]) => [kind, rateOf(counter)])),
      hintNamesDimension: rateOf(namesDimension),
      hintNamesWantedValue: rateOf(namesValue),
      hintAccepted: rateOf(accepted),
      builtinUsersVerdict: rateOf(usersVerdict),
      builtinUsersVerdictByUser: Object.fromEntries(
        builtinUserNames.map((name) => [name, { complaints: rateOf(usersVerdictByUser[name].complaints), thanks: rateOf(usersVerdictByUser[name].thanks) }]),
      ) as Record<BuiltinUserName, { complaints: Rate; thanks: Rate }>,
      builtinUsersHintNamesDimension: rateOf(usersHintNames),
      builtinUsersHintByUser: Object.fromEntries(
        builtinUserNames.map((name) => [name, { helpful: rateOf(usersHintByUser[name].helpful), contrary: rateOf(usersHintByUser[name].contrary) }]),
      ) as Record<BuiltinUserName, { helpful: Rate; contrary: Rate }>,
    };
    const { modelDirectory: _directory, log: _log, ...settings } = options;
    return {
      modelDirectory: options.modelDirectory,
      settings,
      timings: {
        loadSeconds: round(loadSeconds),
        firstTokenSeconds: round(firstTokenSeconds),
        sampleTokensPerSecond: Math.round(sampledTokens / Math.max(samplingSeconds, 1e-9)),
      },
      hintFollowing,
      hintFollowingByValue: byValue,
      noHintFrequencies: { ...noHintFrequencies, replies: noHintReplies },
      wellFormed: { ...wellFormedRate, endsWithEndOfTurn: round(endedWithEndOfTurn / Math.max(1, wellFormed.count)) },
      judge,
      deployedJudge,
      arithmetic: rateOf(arithmetic),
      acceptance: {
        hintFollowingAtLeast90: styleDimensions.every((dimension) => hintFollowing[dimension].rate >= 0.9),
        noHintValuesWithin20To80: styleDimensions.every((dimension) =>
          (styleValues[dimension] as readonly string[]).every((value) => {
            const share = noHintFrequencies[dimension][value] ?? 0;
            return share >= 0.2 && share <= 0.8;
          }),
        ),
        wellFormedAtLeast98: wellFormedRate.rate >= 0.98,
        judgeVerdictAtLeast90: judge.verdictAccuracy.rate >= 0.9,
        judgeHintNamesDimensionAtLeast80: judge.hintNamesDimension.rate >= 0.8,
        deployedJudgeVerdictAtLeast90: deployedJudge === null ? null : deployedJudge.verdictAccuracy.rate >= 0.9,
        deployedJudgeHintNamesDimensionAtLeast80: deployedJudge === null ? null : deployedJudge.hintNamesDimension.rate >= 0.8,
      },
    };
  } finally {
    transformer.dispose();
  }
}
