/**
 * Entry of the judge thread of `clawrl serve` (started by `start-judge-thread.ts`): runs the
 * judge process (`startJudgeProcess`, as `clawrl judge` does) with the server's configuration
 * until the main thread asks it to close.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { createConsoleLogger } from './create-console-logger.js';
import { startJudgeProcess } from '../commands/judge-command.js';
import type { JudgeThreadData, JudgeThreadMessage, JudgeThreadRequest } from './start-judge-thread.js';

// Lower than the HTTP thread (0), but not the trainer's 19: under sustained load the judge still
// gets a share of a busy core (~10% at nice 10 under Linux's scheduler) instead of starving.
const judgeThreadNiceness = 10;

const port = parentPort;
if (port === null) throw new ClawrlError('internal_error', 'judge-thread-worker must run as a worker thread');
const data = workerData as JudgeThreadData;
const post = (message: JudgeThreadMessage) => port.postMessage(message);

try {
  // On Linux the nice value is per thread and pid 0 means this thread. Best effort elsewhere.
  setPriority(0, judgeThreadNiceness);
} catch {
  // Not permitted or not supported: the judge runs at normal priority.
}

try {
  const running = await startJudgeProcess(data.configuration, createConsoleLogger());
  // The main thread shows what the judge's engine serves in /admin/status: sent when it changes.
  let reported = '';
  const report = setInterval(() => {
    const status = running.servingStatus();
    const text = JSON.stringify(status);
    if (status === null || text === reported) return;
    reported = text;
    post({ kind: 'serving', status });
  }, 500);
  report.unref();
  port.on('message', (request: JudgeThreadRequest) => {
    if (request.kind !== 'close') return;
    clearInterval(report);
    void running.close().finally(() => {
      post({ kind: 'closed' });
      port.close();
    });
  });
  post({ kind: 'ready' });
} catch (error) {
  const failure = ClawrlError.isInstance(error) ? error : new ClawrlError('internal_error', String(error));
  post({ kind: 'fatal', error: { code: failure.code, message: failure.message } });
  port.close();
}
