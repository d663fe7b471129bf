// What a long-running process remembers per commit, delivery or pull request: a Map that holds at
// most `capacity` entries and forgets the one set longest ago first, so memory stays bounded
// however long it runs. Setting a key again makes it the newest.

export class BoundedMap<K, V> extends Map<K, V> {
  constructor(readonly capacity: number) {
    super();
  }

  override set(key: K, value: V): this {
    super.delete(key);
    super.set(key, value);
    if (this.size > this.capacity) super.delete(this.keys().next().value as K);
    return this;
  }
}
