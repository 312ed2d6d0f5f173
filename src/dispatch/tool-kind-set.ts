import type { ToolKind, ToolKindConfig } from './tools/tool-kind';

/** The registry's tool kinds, by the `kind` their entries name. */
export class ToolKindSet {
  private readonly byName = new Map<string, ToolKind>();

  constructor(private readonly kinds: readonly ToolKind[]) {
    for (const kind of kinds) {
      if (this.byName.has(kind.kind)) throw new Error(`two tool kinds are named '${kind.kind}'`);
      this.byName.set(kind.kind, kind);
    }
  }

  /** The kind that builds entry `id`. */
  of(id: string, config: ToolKindConfig): ToolKind {
    const kind = this.byName.get(config.kind);
    if (!kind) throw new Error(`tool '${id}' is of kind '${config.kind}', which no tool kind builds`);
    return kind;
  }

  /** Each kind's {@link ToolKind.prepare} with its own entries (none, for a kind the config does not use), all at once. */
  async prepare(entries: ReadonlyArray<readonly [string, ToolKindConfig]>): Promise<void> {
    const byKind = new Map<ToolKind, Array<readonly [string, ToolKindConfig]>>();
    for (const entry of entries) {
      const kind = this.of(...entry);
      const own = byKind.get(kind);
      if (own) own.push(entry);
      else byKind.set(kind, [entry]);
    }
    await Promise.all(this.kinds.map((kind) => kind.prepare?.(byKind.get(kind) ?? [])));
  }

  /** Each kind's {@link ToolKind.start}, all at once. */
  async start(): Promise<void> {
    await Promise.all(this.kinds.map((kind) => kind.start?.()));
  }

  /** Whether the tool of that id and kind is listed now. */
  listed(id: string, kind: string): boolean {
    return this.byName.get(kind)?.listed?.(id) ?? true;
  }

  /** Calls `listener` when any kind's tools change after start-up; returns its remover. */
  onChange(listener: () => void): () => void {
    const removers = this.kinds.map((kind) => kind.onChange?.(listener));
    return () => removers.forEach((remove) => remove?.());
  }

  /** Ends what every kind holds. */
  async close(): Promise<void> {
    await Promise.all(this.kinds.map((kind) => kind.close?.()));
  }
}
