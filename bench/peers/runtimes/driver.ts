/** What the benchmark needs of a runtime: run a program body, give its completion value, release everything. */
export interface Driver {
  /** Runs `body` (the body of an async function) once; resolves with its completion value, rejects on a failed run. */
  run(body: string): Promise<unknown>
  dispose(): Promise<void>
}

/** One runtime of the comparison, measured in processes of its own. */
export interface RuntimeSpec {
  readonly id: string
  readonly label: string
  readonly kind: 'baseline' | 'ptc' | 'peer'
  /** The ptc backend (for `--backend`). */
  readonly backend?: 'quickjs' | 'isolated-vm'
  /** The guest expression that is the tool. */
  readonly tool: string
  /**
   * The Node flags its users must run with: isolated-vm on Node 20 needs `--no-node-snapshot`, which makes a
   * process and its worker threads start slower. A measuring process gets only its runtime's own flags.
   */
  readonly nodeFlags?: readonly string[]
  /** The packages whose versions label the row (peers: as installed in bench/peers/node_modules). */
  readonly packages: readonly string[]
  /** How it is driven, and what to keep in mind reading its figures. */
  readonly method: string
  /** Loads the runtime's modules (timed as "import"); resolves with the function that creates a driver (timed in "cold"). */
  load(): Promise<() => Promise<Driver>>
}

/** Imports a package by a name TypeScript does not resolve: a peer is typed by the interface its driver declares. */
export async function importPeer<T>(name: string): Promise<T> {
  return (await import(name)) as T
}
