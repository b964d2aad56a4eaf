import { expect } from "vitest";

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * A client for the API tests. With CLEARLINE_DOUBLE_SEND=1 every mutating request is sent
 * twice, and the second answer must carry the same status and the same body as the first: the
 * whole suite then doubles as proof that a repeat changes nothing (balances and entry counts are
 * asserted by the same tests either way).
 */
export const doubleSend = process.env.CLEARLINE_DOUBLE_SEND === "1";

export class ApiClient {
  constructor(readonly baseUrl: string, readonly apiKey: string | undefined, private readonly options: { singleSend?: boolean } = {}) {}

  /** A client that never double-sends, for tests whose subject is concurrency itself. */
  singleSend(): ApiClient {
    return new ApiClient(this.baseUrl, this.apiKey, { singleSend: true });
  }

  async get(path: string): Promise<ApiResponse> {
    return this.send("GET", path, undefined, {});
  }

  async post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
    const first = await this.send("POST", path, body, headers);
    if (!doubleSend || this.options.singleSend) return first;
    const second = await this.send("POST", path, body, headers);
    expect({ status: second.status, body: second.text }, `double-send of POST ${path}`).toEqual({ status: first.status, body: first.text });
    return first;
  }

  async send(method: string, path: string, body: unknown, headers: Record<string, string>): Promise<ApiResponse> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  }
}
