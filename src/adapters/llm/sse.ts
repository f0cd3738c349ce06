/**
 * Server-sent events read from the bytes of a response as they arrive (the WHATWG event-stream
 * format: lines ended by LF, CRLF or CR; `event:` and `data:` fields; a blank line ends an event;
 * comments and `id:`/`retry:` ignored). One parser per stream holds only the unfinished line and
 * the unfinished event; a character split between two chunks is kept by the decoder.
 */
import { StringDecoder } from 'node:string_decoder';

export type SseHandler = (event: string, data: string) => void;

export class SseParser {
  private readonly decoder = new StringDecoder('utf8');
  /** The unfinished last line of what was read so far. */
  private line = '';
  private event = '';
  private data = '';
  private hasData = false;
  /** The previous chunk ended with CR: a LF starting the next one belongs to that line break. */
  private afterCr = false;

  constructor(private readonly onEvent: SseHandler) {}

  /** Reads a chunk of the response; calls the handler for every event it completes. */
  push(chunk: Buffer): void {
    let text = this.decoder.write(chunk);
    if (this.afterCr && text.charCodeAt(0) === 10) text = text.slice(1);
    this.afterCr = false;
    let start = 0;
    for (let at = 0; at < text.length; at++) {
      const code = text.charCodeAt(at);
      if (code !== 10 && code !== 13) continue;
      const piece = text.slice(start, at);
      this.processLine(this.line ? this.line + piece : piece);
      this.line = '';
      if (code === 13) {
        if (at + 1 === text.length) this.afterCr = true;
        else if (text.charCodeAt(at + 1) === 10) at++;
      }
      start = at + 1;
    }
    if (start < text.length) this.line += text.slice(start);
  }

  /** The response ended: an event the server left without its blank line still counts. */
  end(): void {
    const rest = this.decoder.end();
    if (rest) this.line += rest;
    if (this.line) this.processLine(this.line);
    this.line = '';
    this.processLine('');
  }

  private processLine(line: string): void {
    if (line === '') {
      if (this.hasData) this.onEvent(this.event || 'message', this.data);
      this.event = '';
      this.data = '';
      this.hasData = false;
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ":" a comment
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') {
      this.data = this.hasData ? `${this.data}\n${value}` : value;
      this.hasData = true;
    } else if (field === 'event') this.event = value;
  }
}
