/**
 * Cuts streamed text before the first stop string. Engines that return token ids (SGLang
 * `/generate`) stop after the token completing a stop string but the ids still spell it, so
 * text decoded from ids must be cut here; the tail that could still begin a stop string is held
 * back so no part of a stop string is ever released.
 */
export class StopSequenceFilter {
  private held = '';
  private stopped = false;
  private readonly holdBack: number;

  constructor(private readonly stops: readonly string[]) {
    this.holdBack = Math.max(0, ...stops.filter((stop) => stop !== '').map((stop) => stop.length - 1));
  }

  /** True once a stop string was seen; later text is dropped. */
  get hasStopped(): boolean {
    return this.stopped;
  }

  push(text: string): string {
    if (this.stopped) return '';
    this.held += text;
    let cut = -1;
    for (const stop of this.stops) {
      if (stop === '') continue;
      const at = this.held.indexOf(stop);
      if (at !== -1 && (cut === -1 || at < cut)) cut = at;
    }
    if (cut !== -1) {
      this.stopped = true;
      const released = this.held.slice(0, cut);
      this.held = '';
      return released;
    }
    let releasable = this.held.length - this.holdBack;
    if (releasable <= 0) return '';
    // Never split a surrogate pair between two deltas.
    const last = this.held.charCodeAt(releasable - 1);
    if (last >= 0xd800 && last <= 0xdbff) releasable -= 1;
    const released = this.held.slice(0, releasable);
    this.held = this.held.slice(releasable);
    return released;
  }

  finish(): string {
    if (this.stopped) return '';
    const released = this.held;
    this.held = '';
    return released;
  }
}
