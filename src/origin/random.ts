/**
 * A small seeded pseudo-random generator (sfc32), so that the same seed always builds the same
 * catalog on every machine; `Math.random` cannot be seeded.
 */
export class SeededRandom {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number) {
    this.#a = 0x9e3779b9;
    this.#b = 0x243f6a88;
    this.#c = 0xb7e15162;
    this.#d = seed >>> 0;
    for (let i = 0; i < 12; i++) this.next();
  }

  /** A float in [0, 1). */
  next(): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.below(items.length)];
    if (item === undefined) throw new RangeError('pick from an empty list');
    return item;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }
}
