/**
 * `triton-node tune`'s progress on stderr: a bar redrawn in place on a
 * terminal, one line per step elsewhere (a log, CI). Written here rather than
 * taken from a progress-bar package: the CLI needs one bar, and the package
 * keeps its install at its own few files.
 * @internal
 */
import type { TuneProgress } from './types.js';

/** The bar's line for `p`, `width` columns wide at most: `[=====>    ] 12/54  what`. */
export function progressLine(p: TuneProgress, width: number): string {
  const count = `${p.done}/${p.planned}`;
  const slots = 24;
  const filled = p.planned > 0 ? Math.min(slots, Math.floor((p.done / p.planned) * slots)) : slots;
  const bar = `[${'='.repeat(filled)}${filled < slots ? '>' : ''}${' '.repeat(Math.max(0, slots - filled - 1))}]`;
  const line = `${bar} ${count}  ${p.what}`;
  return line.length <= width ? line : `${line.slice(0, Math.max(0, width - 1))}…`;
}

/** What to hand `onProgress` for `stream` (process.stderr), and what to call at the end. */
export function progressReporter(stream: NodeJS.WriteStream): {
  onProgress: (p: TuneProgress) => void;
  end: () => void;
} {
  if (!stream.isTTY) {
    return { onProgress: (p) => stream.write(`[${p.done}/${p.planned}] ${p.what}\n`), end: () => {} };
  }
  let drawn = false;
  return {
    onProgress: (p) => {
      stream.write(`\r\x1b[2K${progressLine(p, (stream.columns ?? 80) - 1)}`);
      drawn = true;
    },
    end: () => {
      if (drawn) stream.write('\n');
      drawn = false;
    },
  };
}
