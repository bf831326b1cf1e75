/**
 * Entry of the benchmark's helper processes: `node run-bench-peer.js upstream` or
 * `node run-bench-peer.js proxy <upstream url>`. Each prints `ready <url>` and serves until killed,
 * so load generator, peer and gateway never share an event loop.
 */
import { startBenchUpstream } from './bench-upstream.js';
import { startPassThroughProxy } from './pass-through-proxy.js';

const [role, upstreamUrl] = process.argv.slice(2);
const started = role === 'proxy' && upstreamUrl !== undefined ? await startPassThroughProxy(upstreamUrl) : await startBenchUpstream();
process.stdout.write(`ready ${started.url}\n`);
