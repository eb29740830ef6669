/**
 * What the field lists of stored representations have in common, kept once. The answers of one
 * route differ in a few values (entity tag, length, date, next-page link) and share the rest
 * (every name, `Content-Type`, `Cache-Control`, `Vary`, `Content-Encoding`): a representation
 * holds a shape shared with the others, which lists the names and the shared values, and a list of
 * only its own values, in order. A flat list of sixteen pointers per entry becomes four.
 *
 * A shape also keeps its fields as HTTP/1.1 header text (`FieldText`), so that the deliver step
 * completes a hit's head by joining a few strings (deliver.ts) instead of handing Node a field list
 * that `writeHead` validates and joins again on every send (docs/performance.md, "A stored head
 * written as text").
 */
import { BoundedMemo } from '../../shared/bounded-memo.ts';
import { isField } from '../rules/message.ts';
import { headerListBytes, heapBytes, stringBytes } from './entry-size.ts';

/**
 * A shape's fields as header text, all but `Content-Length` (its value is handed to Node, which
 * would add a second one otherwise, whole-answer.ts): `pieces[0]`, then for each `slots[j]` that
 * own value and `pieces[j + 1]`; every line ends in CRLF.
 */
export interface FieldText {
  readonly pieces: readonly string[];
  /** The own values written between the pieces, by their index among the representation's own values (the length's is skipped). */
  readonly slots: readonly number[];
  /** Whether a `Date` is among the fields (Node adds its own otherwise). */
  readonly dated: boolean;
}

/**
 * The text of `names` with `values`, or undefined when the fields are not a stored body's (no own
 * `Content-Length`) or a name or shared value would not pass Node's checks (the field list is then
 * sent through `writeHead`, which refuses it as before). Own values are not checked here: they come
 * from undici, which refuses a bad field, from the gateway itself, or from the shared tier, whose
 * decoder checks them (entry-codec.ts).
 */
function fieldText(names: readonly string[], values: readonly (string | undefined)[]): FieldText | undefined {
  const pieces: string[] = [];
  const slots: number[] = [];
  let lengthSlot = -1;
  let dated = false;
  let piece = '';
  let own = 0;
  for (let i = 0; i < names.length; i++) {
    const name = names[i] ?? '';
    const value = values[i];
    if (!isField(name, value ?? '')) return undefined;
    dated ||= name === 'date';
    if (name === 'content-length') {
      if (value !== undefined || lengthSlot !== -1) return undefined;
      lengthSlot = own++;
    } else if (value !== undefined) {
      piece += `${name}: ${value}\r\n`;
    } else {
      pieces.push(`${piece}${name}: `);
      slots.push(own++);
      piece = '\r\n';
    }
  }
  if (lengthSlot === -1) return undefined;
  pieces.push(piece);
  return { pieces, slots, dated };
}

export class FieldShape {
  /** Field names, in the order they are sent. */
  readonly names: readonly string[];
  /** Per field: the value every representation of this shape sends, or undefined when each has its own. */
  readonly values: readonly (string | undefined)[];
  /** The fields as HTTP/1.1 header text, when they can be sent that way. */
  readonly text: FieldText | undefined;

  constructor(names: readonly string[], values: readonly (string | undefined)[]) {
    this.names = names;
    this.values = values;
    this.text = fieldText(names, values);
  }
}

/** Shapes kept per cache; emptied when full, so a field whose value never repeats cannot grow it (shapes already held stay valid). */
const SHAPES_LIMIT = 4096;

/** A shape object, its two exact-size lists, its name in the table (a Map entry and the string), and its text. */
function shapeBytes(shape: FieldShape, name: string): number {
  const { text } = shape;
  let bytes = heapBytes(48 + 32) + 2 * headerListBytes(shape.names.length) + stringBytes(name);
  if (text === undefined) return bytes;
  bytes += heapBytes(48) + headerListBytes(text.pieces.length) + headerListBytes(text.slots.length);
  for (const piece of text.pieces) bytes += stringBytes(piece);
  return bytes;
}

/** What ends each name and value of a spelled shape; a shared value begins with SHARED, a gap for a representation's own is OWN. */
const END = '\n';
const SHARED = 's';
const OWN = 'o';

/** `shape` as text another process reads back (`FieldShapes#spelled`): per field its name, then its shared value or a gap. */
export function spell(shape: FieldShape): string {
  let text = '';
  for (let i = 0; i < shape.names.length; i++) {
    const value = shape.values[i];
    text += `${shape.names[i] ?? ''}${END}${value === undefined ? OWN : SHARED + value}${END}`;
  }
  return text;
}

export class FieldShapes {
  readonly #shapes = new BoundedMemo<string, FieldShape>(SHAPES_LIMIT);
  /** Shapes by their spelling, so that a value another process wrote is not parsed and checked field by field on each read. */
  readonly #spellings = new BoundedMemo<string, FieldShape>(SHAPES_LIMIT);
  /**
   * The shapes kept records name, by number (entry-record.ts), and how many holds each has: a
   * shape stays while a record names it, though the table above may have forgotten it.
   */
  readonly #numbers = new Map<FieldShape, number>();
  readonly #byNumber: (FieldShape | undefined)[] = [];
  readonly #holds: number[] = [];
  readonly #freeNumbers: number[] = [];

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
    const shape = this.#shapes.keep(name, new FieldShape(names, values));
    return { shape, bytes: shapeBytes(shape, name) };
  }

  /**
   * The shape `text` spells (`spell`), and what it cost the table if this call made it;
   * undefined when a name or shared value could not be sent (it came from outside the process).
   */
  spelled(text: string): { shape: FieldShape; bytes: number } | undefined {
    const known = this.#spellings.get(text);
    if (known !== undefined) return { shape: known, bytes: 0 };
    const parts = text.split(END);
    // The text ends with END, so the last part is empty and the fields come in pairs before it.
    if (parts.length % 2 !== 1) return undefined;
    const names: string[] = [];
    const values: (string | undefined)[] = [];
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const name = parts[i] ?? '';
      const value = parts[i + 1] ?? '';
      const shared = value.startsWith(SHARED) ? value.slice(1) : undefined;
      if ((shared === undefined && value !== OWN) || !isField(name, shared ?? '')) return undefined;
      names.push(name);
      values.push(shared);
    }
    const made = this.shape(names, values);
    this.#spellings.keep(text, made.shape);
    return made;
  }

  /** `shape`'s number, held once more: it names the shape until each hold is let go of. */
  hold(shape: FieldShape): number {
    let number = this.#numbers.get(shape);
    if (number === undefined) {
      number = this.#freeNumbers.pop() ?? this.#byNumber.length;
      this.#numbers.set(shape, number);
      this.#byNumber[number] = shape;
      this.#holds[number] = 0;
    }
    this.#holds[number] = (this.#holds[number] ?? 0) + 1;
    return number;
  }

  /** Lets go of one hold on the shape `number` names; the number is free for another once none is left. */
  release(number: number): void {
    const holds = (this.#holds[number] ?? 0) - 1;
    this.#holds[number] = holds;
    if (holds > 0) return;
    const shape = this.#byNumber[number];
    if (shape !== undefined) this.#numbers.delete(shape);
    this.#byNumber[number] = undefined;
    this.#freeNumbers.push(number);
  }

  /** The shape a held `number` names. */
  numbered(number: number): FieldShape {
    const shape = this.#byNumber[number];
    if (shape === undefined) throw new Error(`no field shape is numbered ${number}`);
    return shape;
  }

  /** Shapes that records hold now. */
  get held(): number {
    return this.#numbers.size;
  }
}
