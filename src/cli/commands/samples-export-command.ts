/**
 * `clawrl samples export --out <file.jsonl>`: every sample (or those of one status), oldest
 * first, one JSON object per line with the turn's exact prompt and response token ids, the
 * rollout log-probs, the loss mask and what the judge measured: the reward (`score`) and, for OPD
 * and combine, the teacher's log-probs, the unclipped gaps (`distillationGaps`) and any support
 * set's gaps and weights (the trainer forms the advantages from them, `core/rl/advantages.ts`; rows
 * judged before that carry the judge's own in `judgedAdvantages`). With
 * `--with-turns` each line also carries the text behind those tokens (the request messages, the
 * reply and the next state the judge read), so a run's samples can be read without the database.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { RecordReads } from '../../spec/record-reads.js';
import type { SampleStatus, TurnRecord } from '../../spec/records.js';
import { openRecordStore, type StoreConfiguration } from '../wiring/open-record-store.js';
import type { RecordStore } from '../../spec/record-store.js';

export interface SamplesExportConfiguration extends StoreConfiguration {
  out: string;
  status: SampleStatus | undefined;
  withTurns: boolean;
}

const pageSize = 500;

/** Writes the samples as JSON lines; returns how many. */
export async function exportSamples(store: Pick<RecordReads, 'listSamples' | 'getTurns'>, out: string, status: SampleStatus | undefined, withTurns: boolean): Promise<number> {
  const file = createWriteStream(out, { encoding: 'utf8' });
  let written = 0;
  try {
    // `once` rejects when the stream emits 'error' while it waits, so write failures surface here.
    await once(file, 'open');
    for (let offset = 0; ; offset += pageSize) {
      const samples = await store.listSamples({ limit: pageSize, offset, ...(status === undefined ? {} : { status }) });
      const turns = withTurns ? await turnTextsOf(store, samples.map((sample) => sample.turnId)) : new Map<string, TurnText>();
      for (const sample of samples) {
        const line = withTurns ? { ...sample, turn: turns.get(sample.turnId) ?? null } : sample;
        if (!file.write(`${JSON.stringify(line)}\n`)) await once(file, 'drain');
        written += 1;
      }
      if (samples.length < pageSize) break;
    }
    file.end();
    await once(file, 'finish');
    return written;
  } catch (error) {
    if (ClawrlError.isInstance(error)) throw error;
    throw new ClawrlError('configuration_error', `cannot write the samples to ${out}: ${String(error)}`, { cause: error });
  } finally {
    file.destroy();
  }
}

type TurnText = Pick<TurnRecord, 'messages' | 'response' | 'nextState'>;

/** One read per page (not per sample, nor per turn: samples rebuilt by feedback share their turn). */
async function turnTextsOf(store: Pick<RecordReads, 'getTurns'>, turnIds: string[]): Promise<Map<string, TurnText>> {
  const turns = await store.getTurns(turnIds);
  return new Map(turns.map((turn) => [turn.id, { messages: turn.messages, response: turn.response, nextState: turn.nextState }]));
}

export async function runSamplesExportCommand(configuration: SamplesExportConfiguration): Promise<number> {
  const store = await openRecordStore(configuration, { existing: true });
  try {
    return await exportSamples(store, configuration.out, configuration.status, configuration.withTurns);
  } finally {
    await store.close();
  }
}
