/**
 * Starts one of the local engine's worker threads and waits until it has loaded its model, then
 * reports any later crash through `onFailure`. Shared by the sampler and the trainer side.
 */
import { Worker } from 'node:worker_threads';
import { ClawrlError } from '../../spec/clawrl-error.js';
import type { WireError } from './local-engine-protocol.js';

export function errorFromWire(error: WireError): ClawrlError {
  return new ClawrlError(error.code, error.message, error.param === undefined ? {} : { param: error.param });
}

type LoadMessage = { kind: string; error?: WireError };

export async function startEngineWorker<Ready>(options: {
  url: URL;
  workerData: unknown;
  /** Names the worker in errors: `sampler`, `trainer`. */
  name: string;
  onFailure: (error: ClawrlError) => void;
  isClosed: () => boolean;
}): Promise<{ worker: Worker; ready: Ready }> {
  const worker = new Worker(options.url, { workerData: options.workerData });
  // Removing only our own listeners matters: Worker keeps internal ones that wire up its port.
  let onLoadMessage: ((message: LoadMessage) => void) | undefined;
  let onLoadError: ((error: Error) => void) | undefined;
  let onLoadExit: ((code: number) => void) | undefined;
  const ready = await new Promise<Ready>((resolve, reject) => {
    onLoadMessage = (message) => {
      if (message.kind === 'ready') resolve(message as Ready);
      else if (message.kind === 'fatal' && message.error !== undefined) reject(errorFromWire(message.error));
    };
    onLoadError = reject;
    onLoadExit = (code) => reject(new ClawrlError('internal_error', `the ${options.name} worker exited with code ${code} while loading`));
    worker.on('message', onLoadMessage);
    worker.once('error', onLoadError);
    worker.once('exit', onLoadExit);
  }).finally(() => {
    if (onLoadMessage) worker.off('message', onLoadMessage);
    if (onLoadError) worker.off('error', onLoadError);
    if (onLoadExit) worker.off('exit', onLoadExit);
  });
  worker.on('error', (error) =>
    options.onFailure(new ClawrlError('internal_error', `the ${options.name} worker failed: ${error.message}`, { cause: error })),
  );
  worker.on('exit', (code) => {
    if (!options.isClosed()) options.onFailure(new ClawrlError('internal_error', `the ${options.name} worker exited with code ${code}`));
  });
  return { worker, ready };
}
