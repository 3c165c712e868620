/**
 * `lint()` and `triton-node lint`: Triton's configuration guidance checked on
 * a model repository, ESLint-like (file:line:column, rule, severity, message,
 * fix), as text, JSON or SARIF.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { printable } from '../base/printable.js';
import { checkGpuBudget } from './gpu-budget.js';
import { type LintFinding, type LintModel, type LintOptions, type Severity, readLintModel } from './model.js';
import { GPU_MEMORY_BUDGET, type LintRule, RULES, type RuleContext, SERVER_RULES } from './rules.js';

export type { LintFinding, LintOptions, Severity as LintSeverity };

export interface LintReport {
  findings: LintFinding[];
  errorCount: number;
  warningCount: number;
  infoCount: number;
}

/** Every rule id with its one-line description (its page: docs/lint/<id>.md). */
export function lintRules(): Array<{ id: string; description: string }> {
  return [...RULES, GPU_MEMORY_BUDGET, ...SERVER_RULES].map((r) => ({
    id: r.id,
    description: r.description,
  }));
}

const ORDER: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

/** A finding at a config field path of `model`, or at a position in another file. */
function findingAt(
  rule: string,
  model: LintModel,
  at: Parameters<RuleContext['report']>[0],
  severity: Severity,
  message: string,
  fix: string | undefined,
): LintFinding {
  let file: string;
  let line = 1;
  let column = 1;
  if ('path' in at) {
    file = model.configFile ?? model.dir;
    const p = model.positions.get(at.path) ?? model.positions.get(at.path.replace(/\[\d+\]$/, ''));
    if (p !== undefined) ({ line, column } = p);
  } else {
    file = at.file;
    ({ line, column } = at.position);
  }
  return {
    rule,
    severity,
    model: model.name,
    file,
    line,
    column,
    message,
    ...(fix === undefined ? {} : { fix }),
  };
}

function runRule(rule: LintRule, model: LintModel, options: LintOptions, out: LintFinding[]): void {
  rule.check({
    model,
    options,
    report(at, severity, message, fix) {
      out.push(findingAt(rule.id, model, at, severity, message, fix));
    },
  });
}

/** One model folder read and linted: the model (undefined when its config does not parse) and its findings. */
function readAndLint(
  dir: string,
  name: string,
  options: LintOptions,
): { model: LintModel | undefined; findings: LintFinding[] } {
  const out: LintFinding[] = [];
  let model: LintModel;
  try {
    model = readLintModel(dir, name, options);
  } catch (err) {
    const m = /line (\d+), column (\d+)/.exec((err as Error).message);
    out.push({
      rule: 'config-syntax',
      severity: 'error',
      model: name,
      file: join(dir, 'config.pbtxt'),
      line: m ? Number(m[1]) : 1,
      column: m ? Number(m[2]) : 1,
      message: (err as Error).message,
    });
    return { model: undefined, findings: out };
  }
  const disabled = new Set(options.disable ?? []);
  for (const rule of RULES) if (!disabled.has(rule.id)) runRule(rule, model, options, out);
  return { model, findings: out };
}

/** Lints one model folder. A config that does not parse is one error finding. */
export function lintModel(dir: string, name: string, options: LintOptions = {}): LintFinding[] {
  return readAndLint(dir, name, options).findings;
}

/** A finding as the `lint` option words it in errors: rule, message and place. */
export function lintFindingText(f: LintFinding): string {
  return `${f.rule}: ${f.message} (${f.file}:${f.line}:${f.column})`;
}

/**
 * The `lint` option's way with findings: each error and warning becomes a
 * process warning ('TritonLintWarning'); info is dropped. Returns the errors.
 */
export function warnLintFindings(findings: readonly LintFinding[]): LintFinding[] {
  const errors: LintFinding[] = [];
  for (const f of findings) {
    if (f.severity === 'info') continue;
    process.emitWarning(
      `${f.file}:${f.line}:${f.column} ${f.severity} ${f.message} (${f.rule})`,
      'TritonLintWarning',
    );
    if (f.severity === 'error') errors.push(f);
  }
  return errors;
}

/**
 * Lints every model folder of the repositories (and, given `serverOptions`,
 * the server's own settings). Findings are sorted by file, line and
 * severity. Throws a TypeError for a repository that is not a folder.
 */
export function lint(repositories: string | readonly string[], options: LintOptions = {}): LintReport {
  const repos = (typeof repositories === 'string' ? [repositories] : [...repositories]).map((r) =>
    resolve(r),
  );
  if (repos.length === 0) throw new TypeError('lint: no model repository given');
  const findings: LintFinding[] = [];
  const models: LintModel[] = [];
  for (const repo of repos) {
    if (!existsSync(repo) || !statSync(repo).isDirectory()) {
      throw new TypeError(`lint: the model repository '${repo}' is not a directory`);
    }
    for (const entry of readdirSync(repo, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const one = readAndLint(join(repo, entry.name), entry.name, options);
      findings.push(...one.findings);
      if (one.model !== undefined) models.push(one.model);
    }
  }
  // The models of every repository share the server's GPUs.
  if (!(options.disable ?? []).includes(GPU_MEMORY_BUDGET.id)) {
    for (const f of checkGpuBudget(models, options)) {
      findings.push(findingAt(GPU_MEMORY_BUDGET.id, f.model, { path: f.path }, f.severity, f.message, f.fix));
    }
  }
  const mode = options.serverOptions?.modelControlMode;
  if (
    options.serverOptions !== undefined &&
    mode !== undefined &&
    mode !== 'explicit' &&
    !(options.disable ?? []).includes('explicit-control')
  ) {
    findings.push({
      rule: 'explicit-control',
      severity: 'warning',
      model: '',
      file: options.serverOptionsFile ?? '(server options)',
      line: 1,
      column: 1,
      message: `modelControlMode '${mode}': models load ${mode === 'poll' ? 'whenever the repository changes' : 'all at startup'}, not when the service decides`,
      fix: "set modelControlMode to 'explicit' and load models from your deployment (server.deploy)",
    });
  }
  findings.sort(
    (a, b) =>
      a.file.localeCompare(b.file) ||
      a.line - b.line ||
      a.column - b.column ||
      ORDER[a.severity] - ORDER[b.severity],
  );
  return {
    findings,
    errorCount: findings.filter((f) => f.severity === 'error').length,
    warningCount: findings.filter((f) => f.severity === 'warning').length,
    infoCount: findings.filter((f) => f.severity === 'info').length,
  };
}

/** ESLint's stylish-like text: file, then `line:column  severity  message  rule`, fixes indented. */
export function formatLintText(report: LintReport): string {
  const lines: string[] = [];
  let file: string | undefined;
  for (const f of report.findings) {
    if (f.file !== file) {
      if (file !== undefined) lines.push('');
      lines.push(printable(f.file));
      file = f.file;
    }
    lines.push(
      `  ${`${f.line}:${f.column}`.padEnd(8)}${f.severity.padEnd(9)}${printable(f.message)}  ${f.rule}`,
    );
    if (f.fix !== undefined) lines.push(`  ${' '.repeat(17)}fix: ${printable(f.fix)}`);
  }
  if (lines.length > 0) lines.push('');
  lines.push(
    `${report.findings.length} finding(s): ${report.errorCount} error(s), ${report.warningCount} warning(s), ${report.infoCount} info`,
  );
  return `${lines.join('\n')}\n`;
}

/** SARIF 2.1.0, for code scanning in CI. */
export function formatLintSarif(report: LintReport): string {
  const rules = lintRules();
  const level = (s: Severity) => (s === 'info' ? 'note' : s);
  const sarif = {
    version: '2.1.0',
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    runs: [
      {
        tool: {
          driver: {
            name: 'triton-node lint',
            rules: rules.map((r) => ({
              id: r.id,
              shortDescription: { text: r.description },
              help: { text: `See docs/lint/${r.id}.md in the triton-node package.` },
            })),
          },
        },
        results: report.findings.map((f) => ({
          ruleId: f.rule,
          ...(rules.some((r) => r.id === f.rule)
            ? { ruleIndex: rules.findIndex((r) => r.id === f.rule) }
            : {}),
          level: level(f.severity),
          message: { text: f.fix === undefined ? f.message : `${f.message} (fix: ${f.fix})` },
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: f.file },
                region: { startLine: f.line, startColumn: f.column },
              },
            },
          ],
        })),
      },
    ],
  };
  return `${JSON.stringify(sarif, null, 2)}\n`;
}
