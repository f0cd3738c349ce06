/**
 * Reading the zip containers of OOXML (DOCX, XLSX, PPTX) and ODF (ODT, ODS, ODP) files within
 * limits: the central directory's entry count, sizes and compression ratios are checked before
 * anything is inflated, and the bytes actually inflated are counted again (a directory may lie),
 * so a zip bomb stops at the limit instead of filling memory. fflate does the inflating.
 */
import { Unzip, UnzipInflate, unzipSync, type UnzipFileInfo } from 'fflate';
import { IngestError } from './knowledge.blocks.js';

export const ZIP_LIMITS = {
  /** Entries in one archive. */
  maxEntries: 10_000,
  /** Inflated bytes of one entry. */
  maxEntryBytes: 48 * 1024 * 1024,
  /** Inflated bytes of the entries read, in all. */
  maxTotalBytes: 128 * 1024 * 1024,
  /** Inflated/compressed ratio allowed for entries over 1 MiB once inflated. */
  maxRatio: 200,
};

export interface ZipEntryInfo {
  name: string;
  compressed: number;
  size: number;
}

const MIB = 1024 * 1024;

/** Why an archive's directory is refused (entries, sizes, ratios), or null when it is within limits. */
export function zipDirectoryProblem(entries: ZipEntryInfo[]): string | null {
  if (entries.length > ZIP_LIMITS.maxEntries)
    return `The archive has ${entries.length} entries; at most ${ZIP_LIMITS.maxEntries} are read`;
  let total = 0;
  for (const entry of entries) {
    total += entry.size;
    if (entry.size > ZIP_LIMITS.maxEntryBytes)
      return `The archive's entry ${entry.name.slice(0, 80)} expands to ${Math.round(entry.size / MIB)} MiB; at most ${ZIP_LIMITS.maxEntryBytes / MIB} MiB per entry`;
    if (entry.size > MIB && entry.size / Math.max(entry.compressed, 1) > ZIP_LIMITS.maxRatio)
      return `The archive's entry ${entry.name.slice(0, 80)} expands ${Math.round(entry.size / Math.max(entry.compressed, 1))} times (a zip bomb?); at most ${ZIP_LIMITS.maxRatio} times`;
  }
  if (total > ZIP_LIMITS.maxTotalBytes)
    return `The archive expands to ${Math.round(total / MIB)} MiB; at most ${ZIP_LIMITS.maxTotalBytes / MIB} MiB`;
  return null;
}

/** The archive's directory (names and declared sizes), nothing inflated; null when it is not a readable zip. */
export function zipDirectory(bytes: Uint8Array): ZipEntryInfo[] | null {
  const entries: ZipEntryInfo[] = [];
  try {
    unzipSync(bytes, {
      filter: (file: UnzipFileInfo) => {
        entries.push({ name: file.name, compressed: file.size, size: file.originalSize });
        return false;
      },
    });
  } catch {
    return null;
  }
  return entries;
}

/**
 * The entries of `bytes` that `wanted` accepts, inflated (as UTF-8 text), checked against the
 * limits before and while inflating. Unwanted entries are skipped without inflating, except with
 * `all` (every entry inflated and counted, for a container another library reads afterwards).
 */
export function readZip(
  bytes: Uint8Array,
  wanted: (name: string) => boolean,
  options: { all?: boolean } = {},
): Map<string, Uint8Array> {
  const directory = zipDirectory(bytes);
  if (!directory) throw new IngestError('The file is not a readable zip archive (corrupt or truncated)');
  const problem = zipDirectoryProblem(directory);
  if (problem) throw new IngestError(problem);
  const out = new Map<string, Uint8Array>();
  let total = 0;
  let failure: string | null = null;
  const unzip = new Unzip();
  unzip.register(UnzipInflate);
  unzip.onfile = (file) => {
    const keep = wanted(file.name);
    if (!keep && !options.all) return;
    const parts: Uint8Array[] = [];
    let size = 0;
    file.ondata = (error, data, final) => {
      if (failure) return;
      if (error) {
        failure = `The archive's entry ${file.name.slice(0, 80)} is corrupt: ${error.message}`;
        return;
      }
      size += data.length;
      total += data.length;
      if (size > ZIP_LIMITS.maxEntryBytes || total > ZIP_LIMITS.maxTotalBytes) {
        failure = `The archive expands beyond its declared sizes past ${Math.round(Math.min(size, total) / MIB)} MiB (a zip bomb?)`;
        file.terminate();
        return;
      }
      if (keep) parts.push(data);
      if (final && keep) out.set(file.name, concat(parts, size));
    };
    file.start();
  };
  const step = 256 * 1024;
  try {
    for (let offset = 0; offset < bytes.length && !failure; offset += step) {
      unzip.push(bytes.subarray(offset, Math.min(offset + step, bytes.length)), offset + step >= bytes.length);
    }
  } catch (error) {
    if (!failure) failure = `The archive could not be read: ${(error as Error).message}`;
  }
  if (failure) throw new IngestError(failure);
  return out;
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const utf8 = new TextDecoder('utf-8');
export const zipText = (entries: Map<string, Uint8Array>, name: string): string | undefined => {
  const bytes = entries.get(name);
  return bytes ? utf8.decode(bytes) : undefined;
};
