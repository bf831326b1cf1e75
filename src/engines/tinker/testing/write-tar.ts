/**
 * A tar of regular files, gzipped or not, as Tinker's checkpoint archives are, for tests. Written by
 * `tar-stream`, which puts a name longer than ustar's 100 characters in a pax header, as Python's
 * `tarfile` (the default PAX format) does.
 */
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';

export async function writeTar(files: Record<string, Uint8Array>, options: { gzip: boolean }): Promise<Uint8Array> {
  const packer = pack();
  for (const [name, data] of Object.entries(files)) packer.entry({ name, size: data.length, mode: 0o644 }, Buffer.from(data));
  packer.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of packer) chunks.push(chunk as Buffer);
  const tar = Buffer.concat(chunks);
  return new Uint8Array(options.gzip ? gzipSync(tar) : tar);
}
