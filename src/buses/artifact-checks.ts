/**
 * Argument checks and the immutability rule shared by every `ArtifactStore` adapter, so the
 * adapters reject exactly the same inputs.
 */
import { createHash } from 'node:crypto';
import { artifactFileNamePattern } from '../spec/artifact-store.js';
import type { ArtifactFiles } from '../spec/artifact-store.js';
import { ClawrlError } from '../spec/clawrl-error.js';

/** What identifies one file's content: enough to tell an identical retry from a conflicting put. */
export interface ArtifactFileDigest {
  size: number;
  sha256: string;
}

export function checkArtifactVersion(version: number): void {
  if (!Number.isSafeInteger(version) || version < 0) {
    throw new ClawrlError('invalid_request', `policy version must be a non-negative integer, got ${version}`, { param: 'version' });
  }
}

export function checkArtifactFiles(files: ArtifactFiles): void {
  const names = Object.keys(files);
  if (names.length === 0) throw new ClawrlError('invalid_request', 'an artifact needs at least one file', { param: 'files' });
  for (const name of names) {
    if (!artifactFileNamePattern.test(name)) {
      throw new ClawrlError('invalid_request', `invalid artifact file name "${name}": use a flat name of letters, digits, ".", "_" or "-"`, {
        param: 'files',
      });
    }
    if (!(files[name] instanceof Uint8Array)) {
      throw new ClawrlError('invalid_request', `artifact file "${name}" must be a Uint8Array`, { param: 'files' });
    }
  }
}

export function digestArtifactFiles(files: ArtifactFiles): Record<string, ArtifactFileDigest> {
  return Object.fromEntries(
    Object.entries(files).map(([name, data]) => [name, { size: data.byteLength, sha256: createHash('sha256').update(data).digest('hex') }]),
  );
}

/** Throws unless the stored version has exactly these files with exactly these bytes. */
export function checkSameArtifact(version: number, stored: Record<string, ArtifactFileDigest>, incoming: Record<string, ArtifactFileDigest>): void {
  const storedNames = Object.keys(stored).sort();
  const incomingNames = Object.keys(incoming).sort();
  const same =
    storedNames.length === incomingNames.length &&
    storedNames.every(
      (name, index) => name === incomingNames[index] && stored[name]?.sha256 === incoming[name]?.sha256 && stored[name]?.size === incoming[name]?.size,
    );
  if (!same) {
    throw new ClawrlError('invalid_request', `policy version ${version} is already stored with different files; versions are immutable`, {
      param: 'version',
    });
  }
}
