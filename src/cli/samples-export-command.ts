/**
 * `clawrl samples export --out <file.jsonl>`: every sample (or those of one status), oldest
 * first, one JSON object per line with the turn's exact prompt and response token ids, the
 * rollout log-probs, the loss mask, the advantages and, for OPD, the teacher's log-probs. With
 * `--with-turns` each line also carries the text behind those tokens (the request messages, the
 * reply and the next state the judge read), so a run's samples can be read without the database.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { RecordStore } from '../spec/record-store.js';
import type { SampleStatus, TurnRecord } from '../spec/records.js';
import { openRecordStore, type StoreConfiguration } from './open-record-store.js';

export interface SamplesExportConfiguration extends StoreConfiguration {
  out: string;
  status: SampleStatus | undefined;
  withTurns: boolean;
}

const pageSize = 500;

/** Writes the samples as JSON lines; returns how many. */
export async function exportSamples(store: RecordStore, out: string, status: SampleStatus | undefined, withTurns: boolean): Promise<number> {
  const file = createWriteStream(out, { encoding: 'utf8' });
  let written = 0;
  try {
    // `once` rejects when the stream emits 'error' while it waits, so write failures surface here.
    await once(file, 'open');
    for (let offset = 0; ; offset += pageSize) {
      const samples = await store.listSamples({ limit: pageSize, offset, ...(status === undefined ? {} : { status }) });
      // Samples rebuilt by feedback share their turn: read each turn once per page.
      const turns = new Map<string, TurnText | null>();
      for (const sample of samples) {
        const line = withTurns ? { ...sample, turn: await turnTextOf(store, sample.turnId, turns) } : sample;
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

async function turnTextOf(store: RecordStore, turnId: string, read: Map<string, TurnText | null>): Promise<TurnText | null> {
  if (read.has(turnId)) return read.get(turnId) ?? null;
  const turn = await store.getTurn(turnId);
  const text = turn === null ? null : { messages: turn.messages, response: turn.response, nextState: turn.nextState };
  read.set(turnId, text);
  return text;
}

export async function runSamplesExportCommand(configuration: SamplesExportConfiguration): Promise<number> {
  const store = await openRecordStore(configuration);
  try {
    return await exportSamples(store, configuration.out, configuration.status, configuration.withTurns);
  } finally {
    await store.close();
  }
}
