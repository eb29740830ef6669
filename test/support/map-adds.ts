/**
 * How many keys `work` adds to any V8 `Map`: the memory tier's policies must add none as entries
 * come and go (a `Map` whose keys come and go rebuilds its table in the old generation).
 */
export function mapAdds(work: () => void): number {
  const mapSet = Object.getOwnPropertyDescriptor(Map.prototype, 'set')?.value as (
    this: Map<unknown, unknown>,
    key: unknown,
    value: unknown,
  ) => Map<unknown, unknown>;
  let added = 0;
  Map.prototype.set = function set<K, V>(this: Map<K, V>, key: K, value: V): Map<K, V> {
    if (!this.has(key)) added++;
    return mapSet.call(this, key, value) as Map<K, V>;
  };
  try {
    work();
  } finally {
    Map.prototype.set = mapSet;
  }
  return added;
}
