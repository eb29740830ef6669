/** The levels of the hit-path ladder, cheapest first (bench/hit-ladder.ts says what each adds). */
export const LADDER = ['bare', 'deliver', 'target', 'lookup', 'auth', 'metrics', 'log'] as const;
