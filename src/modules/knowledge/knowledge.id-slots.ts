/**
 * The slots of an in-process index by uuid (the BM25 index's chunks, the title index's
 * documents): each slot's id as four 32-bit words, and an open-addressed table from an id to its
 * slot that holds the live slots only (rebuilt without the dead ones, so an id may come back in a
 * new slot). Typed arrays, not a Map of strings: a million ids in 16 MiB.
 */

/** `array`, or a copy at least `size` long (half as long again at least: appends stay amortised). */
export function grow<T extends Int32Array | Uint16Array | Uint32Array | Float64Array | Uint8Array>(
  array: T,
  size: number,
): T {
  if (size <= array.length) return array;
  const next = new (array.constructor as new (n: number) => T)(Math.max(size, Math.ceil(array.length * 1.5), 16));
  next.set(array);
  return next;
}

/** Hex of a uuid as four unsigned 32-bit words (their order is the uuid's order). */
export function uuidWords(id: string, into: Uint32Array, at: number) {
  const hex = id.replace(/-/g, '');
  for (let w = 0; w < 4; w++) into[at + w] = parseInt(hex.slice(w * 8, w * 8 + 8), 16) >>> 0;
}

/** Two hex digits of each byte (a hit's id is written per byte: a fifth of the time of toString and padStart). */
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

export function uuidText(words: Uint32Array, at: number): string {
  const hex = (word: number) =>
    HEX[word >>> 24]! + HEX[(word >>> 16) & 255]! + HEX[(word >>> 8) & 255]! + HEX[word & 255]!;
  const a = words[at]!;
  const b = words[at + 1]!;
  const c = words[at + 2]!;
  const d = words[at + 3]!;
  return `${hex(a)}-${HEX[b >>> 24]}${HEX[(b >>> 16) & 255]}-${HEX[(b >>> 8) & 255]}${HEX[b & 255]}-${HEX[c >>> 24]}${HEX[(c >>> 16) & 255]}-${HEX[(c >>> 8) & 255]}${HEX[c & 255]}${hex(d)}`;
}

export class IdSlots {
  /** The ids, four words a slot. */
  private words = new Uint32Array(64);
  /** Open-addressed table of slot + 1 by the id's words (0: empty). */
  private table = new Int32Array(64);
  /** Slots taken, live or dead. */
  count = 0;

  get bytes(): number {
    return this.words.byteLength + this.table.byteLength;
  }

  /** The live slot of `id`, or -1. */
  lookup(id: string): number {
    const words = new Uint32Array(4);
    uuidWords(id, words, 0);
    const mask = this.table.length - 1;
    for (let h = (words[0]! ^ words[3]!) & mask; ; h = (h + 1) & mask) {
      const entry = this.table[h]!;
      if (entry === 0) return -1;
      const at = (entry - 1) * 4;
      if (
        this.words[at] === words[0] &&
        this.words[at + 1] === words[1] &&
        this.words[at + 2] === words[2] &&
        this.words[at + 3] === words[3]
      )
        return entry - 1;
    }
  }

  /** A new slot for `id`, after every existing one (in the table once `index` is called). */
  append(id: string): number {
    const slot = this.count++;
    this.words = grow(this.words, (slot + 1) * 4);
    uuidWords(id, this.words, slot * 4);
    return slot;
  }

  /** Puts a new slot in the table; a table half full doubles, keeping the slots `alive` marks. */
  index(slot: number, alive: Uint8Array) {
    if (this.count * 2 > this.table.length) this.rebuild(alive, this.table.length * 2);
    else this.place(slot);
  }

  /** The table again with the slots `alive` marks only. */
  rebuild(alive: Uint8Array, size = this.table.length) {
    if (size === this.table.length) this.table.fill(0);
    else this.table = new Int32Array(size);
    for (let s = 0; s < this.count; s++) if (alive[s]) this.place(s);
  }

  idOf(slot: number): string {
    return uuidText(this.words, slot * 4);
  }

  /** The order of two slots' ids (the uuids' own order). */
  compare(a: number, b: number): number {
    for (let w = 0; w < 4; w++) {
      const x = this.words[a * 4 + w]!;
      const y = this.words[b * 4 + w]!;
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  }

  private place(slot: number) {
    const mask = this.table.length - 1;
    const at = slot * 4;
    let h = (this.words[at]! ^ this.words[at + 3]!) & mask;
    while (this.table[h] !== 0) h = (h + 1) & mask;
    this.table[h] = slot + 1;
  }
}
