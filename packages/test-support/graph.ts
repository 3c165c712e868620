/**
 * Cycles of a dependency graph (file → the files it imports or includes),
 * found by depth-first search: each cycle once, as its path from the file
 * where the search entered it (`a -> b -> a`). Edges to files outside the
 * graph are ignored. Used by the structure tests of lib/, the gateway and
 * native/.
 */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') {
        found.push([...stack.slice(stack.indexOf(next)), next].join(' -> '));
      } else if (!state.has(next)) {
        visit(next);
      }
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}
