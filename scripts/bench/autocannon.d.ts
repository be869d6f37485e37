declare module 'autocannon' {
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    /** Stop after this many requests (instead of a duration). */
    amount?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Requests each connection loops over; `setupRequest` may change one before it goes (e.g. its path). */
    requests?: Array<{ method?: string; path?: string; body?: string; setupRequest?: (request: { path: string; [key: string]: unknown }) => { path: string; [key: string]: unknown } }>;
  }
  interface Result {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number; average: number };
    non2xx: number;
    errors: number;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
