import { useEffect, useState, type ChangeEvent } from 'react';
import { useInput, useNotify, useRecordContext, useResourceContext } from 'react-admin';
import { Box, Button, Chip, CircularProgress, FormHelperText, IconButton, Tooltip, Typography } from '@mui/material';
import ArrowBackIcon from '@mui/icons-material/ArrowBack';
import ArrowForwardIcon from '@mui/icons-material/ArrowForward';
import DeleteIcon from '@mui/icons-material/Delete';
import FileIcon from '@mui/icons-material/InsertDriveFile';
import UploadIcon from '@mui/icons-material/Upload';
import { call } from '../api/client.js';
import type { JsonSchema } from '../api/schemas.js';
import { typeOf } from './json-schema.js';

/**
 * Storage keys (`x-storage-key`, docs/storage.md) in forms and record pages: images as thumbnails, other files
 * as a chip with their name; forms upload through `POST /storage/objects` (as the schema's visibility), remove
 * and reorder. A thumbnail is the object's signed URL (`GET /storage/signed-url`), asked once per key.
 */

/** The visibility uploads get (`x-storage-key: "public"`; true or "private": private), or null: not a storage key. */
export function storageKeyOf(s: JsonSchema): { visibility: 'public' | 'private'; many: boolean } | null {
  const flag = (x: JsonSchema | undefined) => (x && typeOf(x) === 'string' && (x['x-storage-key'] === true || x['x-storage-key'] === 'public' || x['x-storage-key'] === 'private') ? x['x-storage-key'] : null);
  const one = flag(s);
  const many = typeOf(s) === 'array' ? flag(s.items) : null;
  const value = one ?? many;
  return value === null ? null : { visibility: value === 'public' ? 'public' : 'private', many: one === null };
}

const IMAGE = /\.(png|jpe?g|gif|webp|avif|svg|bmp|ico)$/i;
/** The file name a key ends with, without the upload's unique prefix. */
const fileName = (key: string) => (key.split('/').pop() ?? key).replace(/^[0-9a-z]{8,}-/, '');

const urls = new Map<string, Promise<string | null>>();
/** The signed URL of a key (null: the object is gone or another tenant's), asked once per key and page load. */
function signedUrl(key: string): Promise<string | null> {
  let url = urls.get(key);
  if (!url) {
    url = call<{ url: string }>(`/storage/signed-url?key=${encodeURIComponent(key)}&expiresIn=3600`).then((r) => r.data.url, () => null);
    urls.set(key, url);
  }
  return url;
}

function StoredFile({ storageKey }: { storageKey: string }) {
  const [url, setUrl] = useState<string | null | undefined>(undefined);
  useEffect(() => {
    let live = true;
    void signedUrl(storageKey).then((u) => { if (live) setUrl(u); });
    return () => { live = false; };
  }, [storageKey]);
  const name = fileName(storageKey);
  if (IMAGE.test(storageKey) && url) {
    return (
      <Box component="a" href={url} target="_blank" rel="noreferrer" title={storageKey} sx={{ display: 'block', width: 96, height: 96, border: 1, borderColor: 'divider', borderRadius: 1, overflow: 'hidden' }}>
        <Box component="img" src={url} alt={name} sx={{ width: '100%', height: '100%', objectFit: 'cover', display: 'block' }} />
      </Box>
    );
  }
  if (url === undefined && IMAGE.test(storageKey)) return <Box sx={{ width: 96, height: 96, display: 'grid', placeItems: 'center' }}><CircularProgress size={20} aria-label={`Loading ${name}`} /></Box>;
  return (
    <Chip
      icon={<FileIcon />} label={url === null ? `${name} (missing)` : name} title={storageKey} variant="outlined"
      {...(url ? { component: 'a', href: url, target: '_blank', rel: 'noreferrer', clickable: true } : {})}
    />
  );
}

const asKeys = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' && value ? [value] : []);

/** A record page's files: thumbnails and chips, in their stored order. */
export function StorageKeysField({ source }: { source: string; label?: string }) {
  const record = useRecordContext();
  const keys = asKeys(record?.[source]);
  if (!keys.length) return <Typography variant="body2" color="text.secondary">No files</Typography>;
  return (
    <Box component="ul" sx={{ display: 'flex', flexWrap: 'wrap', gap: 1, listStyle: 'none', p: 0, m: 0 }}>
      {keys.map((key) => <li key={key}><StoredFile storageKey={key} /></li>)}
    </Box>
  );
}

/** A segment of a key: letters, digits, `.`, `_`, `-`, starting with a letter or digit, unique by a prefix. */
function uploadName(name: string): string {
  const clean = name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(-100) || 'file';
  return `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}-${clean}`;
}

interface InputProps {
  source: string;
  label: string;
  id?: string;
  helperText?: string | false;
  visibility: 'public' | 'private';
  many: boolean;
}

/** A form's files: upload (several at once), remove, move left and right; saved with the form. */
export function StorageKeysInput({ source, label, id, helperText, visibility, many }: InputProps) {
  // Stored under the record's schema: product = its namespace, collection = its name (`ns.schema`).
  const [product, collection] = (useResourceContext() ?? 'console.files').split('.');
  const { field, fieldState } = useInput({ source });
  const notify = useNotify();
  const [uploading, setUploading] = useState(0);
  const keys = asKeys(field.value);
  const save = (next: string[]) => field.onChange(many ? next : next[0] ?? null);
  const inputId = `${id ?? source}-upload`;

  async function upload(event: ChangeEvent<HTMLInputElement>) {
    const files = [...(event.target.files ?? [])];
    event.target.value = '';
    if (!files.length) return;
    setUploading((n) => n + files.length);
    const added: string[] = [];
    for (const file of many ? files : files.slice(0, 1)) {
      try {
        const { data } = await call<{ key: string }>('/storage/objects', {
          method: 'POST', raw: file,
          headers: {
            'Content-Type': file.type || 'application/octet-stream', 'X-Platform-Product': product, 'X-Platform-Collection': collection,
            'X-Platform-Filename': uploadName(file.name), 'X-Platform-Visibility': visibility,
          },
        });
        added.push(data.key);
      } catch (err) {
        notify(`${file.name} was not uploaded: ${(err as Error).message}`, { type: 'error' });
      } finally {
        setUploading((n) => n - 1);
      }
    }
    if (added.length) save(many ? [...keys, ...added] : added);
  }

  const move = (from: number, to: number) => {
    const next = [...keys];
    const [key] = next.splice(from, 1);
    next.splice(to, 0, key);
    save(next);
  };

  return (
    <Box component="fieldset" role="group" aria-labelledby={`${inputId}-legend`} sx={{ border: 1, borderColor: 'divider', borderRadius: 1, p: 1.5, mb: 2, width: '100%' }}>
      <Typography component="legend" id={`${inputId}-legend`} variant="body2" sx={{ px: 0.5 }}>{label}</Typography>
      {keys.length > 0 && (
        <Box component="ul" sx={{ display: 'flex', flexWrap: 'wrap', gap: 1.5, listStyle: 'none', p: 0, m: 0, mb: 1 }}>
          {keys.map((key, i) => {
            const name = fileName(key);
            return (
              <Box component="li" key={key} sx={{ display: 'flex', flexDirection: 'column', alignItems: 'center', gap: 0.5 }}>
                <StoredFile storageKey={key} />
                <Box>
                  {many && (
                    <>
                      <Tooltip title="Move left"><span><IconButton size="small" aria-label={`Move ${name} left`} disabled={i === 0} onClick={() => move(i, i - 1)}><ArrowBackIcon fontSize="inherit" /></IconButton></span></Tooltip>
                      <Tooltip title="Move right"><span><IconButton size="small" aria-label={`Move ${name} right`} disabled={i === keys.length - 1} onClick={() => move(i, i + 1)}><ArrowForwardIcon fontSize="inherit" /></IconButton></span></Tooltip>
                    </>
                  )}
                  <Tooltip title="Remove"><IconButton size="small" aria-label={`Remove ${name}`} onClick={() => save(keys.filter((_, j) => j !== i))}><DeleteIcon fontSize="inherit" /></IconButton></Tooltip>
                </Box>
              </Box>
            );
          })}
        </Box>
      )}
      <Button component="label" htmlFor={inputId} variant="outlined" size="small" startIcon={uploading ? <CircularProgress size={16} /> : <UploadIcon />} disabled={uploading > 0}>
        {uploading ? 'Uploading…' : keys.length && !many ? 'Replace file' : many ? 'Upload files' : 'Upload a file'}
        <input id={inputId} type="file" multiple={many} hidden onChange={(e) => { void upload(e); }} />
      </Button>
      {(fieldState.error?.message || helperText) && (
        <FormHelperText id={`${id ?? source}-helper-text`} error={Boolean(fieldState.error)}>{fieldState.error?.message ?? helperText}</FormHelperText>
      )}
    </Box>
  );
}
