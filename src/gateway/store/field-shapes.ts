/**
 * What the field lists of stored representations have in common, kept once. The answers of one
 * route differ in a few values (entity tag, length, date, next-page link) and share the rest
 * (every name, `Content-Type`, `Cache-Control`, `Vary`, `Content-Encoding`): a representation
 * holds a shape shared with the others, which lists the names and the shared values, and a list of
 * only its own values, in order. A flat list of sixteen pointers per entry becomes four.
 *
 * The deliver step writes a shape and its own values into the one field list it hands to
 * `writeHead` (deliver.ts), so a send costs what it did with a flat list.
 */
import { headerListBytes, heapBytes, stringBytes } from './entry-size.ts';

export class FieldShape {
  /** Field names, in the order they are sent. */
  readonly names: readonly string[];
  /** Per field: the value every representation of this shape sends, or undefined when each has its own. */
  readonly values: readonly (string | undefined)[];

  constructor(names: readonly string[], values: readonly (string | undefined)[]) {
    this.names = names;
    this.values = values;
  }
}

/** Shapes kept per cache; emptied when full, so a field whose value never repeats cannot grow it (shapes already held stay valid). */
const SHAPES_LIMIT = 4096;

/** A shape object, its two exact-size lists, and its name in the table (a Map entry and the string). */
function shapeBytes(fields: number, name: string): number {
  return heapBytes(40 + 32) + 2 * headerListBytes(fields) + stringBytes(name);
}

export class FieldShapes {
  readonly #shapes = new Map<string, FieldShape>();

  /**
   * The shape of `names` with `values` (undefined where a representation has its own), and the
   * bytes it costs when this call made it (the representation that brings it pays for it, as with
   * shared strings), 0 when it was known.
   */
  shape(names: readonly string[], values: readonly (string | undefined)[]): { shape: FieldShape; bytes: number } {
    // Field names and values hold no line breaks (RFC 9110 §5.5), so the name is unambiguous.
    const name = `${names.join('\n')}\n\n${values.map((v) => (v === undefined ? '\u0000' : v)).join('\n')}`;
    const known = this.#shapes.get(name);
    if (known !== undefined) return { shape: known, bytes: 0 };
    if (this.#shapes.size >= SHAPES_LIMIT) this.#shapes.clear();
    const shape = new FieldShape(names, values);
    this.#shapes.set(name, shape);
    return { shape, bytes: shapeBytes(names.length, name) };
  }
}
