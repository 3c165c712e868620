// Types for parse-prometheus-text-format (the package ships none). The shape
// follows its README: prom2json-compatible families with string values.
declare module 'parse-prometheus-text-format' {
  export interface PrometheusSample {
    labels?: Record<string, string>;
    value?: string;
    /** Histograms: cumulative count per upper bound ('+Inf' included). */
    buckets?: Record<string, string>;
    /** Summaries. */
    quantiles?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  export interface PrometheusFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: PrometheusSample[];
  }
  /** Throws on a line that is not valid text exposition. */
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
