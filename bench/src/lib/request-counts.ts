import type { HttpClient } from './http.js';

/** The requests a kubeloop server answered so far: `apiserver_request_total` of its /metrics, summed by `VERB resource[/subresource]`. */
export async function requestCounts(http: HttpClient): Promise<Map<string, number>> {
  const text = (await http.request('GET', '/metrics')).body.toString();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const label = (k: string) => new RegExp(`[{,]${k}="([^"]*)"`).exec(line)?.[1] ?? '';
    const sub = label('subresource');
    const key = `${label('verb')} ${label('resource')}${sub ? `/${sub}` : ''}`;
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}
