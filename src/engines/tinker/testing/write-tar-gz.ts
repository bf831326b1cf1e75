/** A `.tar.gz` of regular files (ustar headers), as Tinker's checkpoint archives are, for the test server. */
import { gzipSync } from 'node:zlib';

export function writeTarGz(files: Record<string, Uint8Array>): Uint8Array {
  const blocks: Uint8Array[] = [];
  const encoder = new TextEncoder();
  for (const [name, data] of Object.entries(files)) {
    const header = new Uint8Array(512);
    const put = (text: string, offset: number) => header.set(encoder.encode(text), offset);
    put(name, 0);
    put('0000644\0', 100);
    put('0000000\0', 108);
    put('0000000\0', 116);
    put(`${data.length.toString(8).padStart(11, '0')}\0`, 124);
    put('00000000000\0', 136);
    put('        ', 148);
    put('0', 156);
    put('ustar\u000000', 257);
    const checksum = header.reduce((sum, byte) => sum + byte, 0);
    put(`${checksum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(header, data, new Uint8Array((512 - (data.length % 512)) % 512));
  }
  blocks.push(new Uint8Array(1024));
  return gzipSync(Buffer.concat(blocks));
}
