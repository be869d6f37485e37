import { useState } from 'react';
import { Title } from 'react-admin';
import { Alert, Box, Button, Card, CardContent, FormControlLabel, MenuItem, Switch, Table, TableBody, TableCell, TableHead, TableRow, TextField, Typography } from '@mui/material';
import { api, isApiError } from '../../../admin/src/pack-kit.js';

interface ImportResult { pages: Array<{ url: string; slug: string; title: string; action: string; id: string | null }>; stats?: Record<string, unknown> }

/** Site import from a URL (POST /cms/import-url): a dry-run preview first, then apply. */
export default function SiteImport() {
  const [url, setUrl] = useState('');
  const [depth, setDepth] = useState(1);
  const [publish, setPublish] = useState(false);
  const [preview, setPreview] = useState<ImportResult | null>(null);
  const [applied, setApplied] = useState<ImportResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (dryRun: boolean) => {
    setBusy(true);
    setError(null);
    try {
      const result = await api<ImportResult>('/cms/import-url', { method: 'POST', body: { url, depth, dry_run: dryRun, publish } });
      if (dryRun) { setPreview(result); setApplied(null); } else setApplied(result);
    } catch (err) {
      setError(isApiError(err) ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const shown = applied ?? preview;
  return (
    <Card sx={{ mt: 2 }}>
      <Title title="Site import" />
      <CardContent>
        <Box component="form" onSubmit={(e) => { e.preventDefault(); void run(true); }} sx={{ display: 'flex', gap: 2, flexWrap: 'wrap', alignItems: 'center' }}>
          <TextField id="import-url" label="Site URL" value={url} onChange={(e) => setUrl(e.target.value)} sx={{ minWidth: 360 }} />
          <TextField id="import-depth" select label="Depth" value={depth} onChange={(e) => setDepth(Number(e.target.value))} sx={{ width: 100 }}>
            {[0, 1, 2, 3].map((d) => <MenuItem key={d} value={d}>{d}</MenuItem>)}
          </TextField>
          <FormControlLabel control={<Switch checked={publish} onChange={(e) => setPublish(e.target.checked)} />} label="Publish imported pages" />
          <Button type="submit" variant="outlined" disabled={busy || !url}>Preview (dry run)</Button>
          <Button variant="contained" disabled={busy || !preview} onClick={() => void run(false)}>Apply import</Button>
        </Box>
        {error && <Alert severity="error" role="alert" sx={{ mt: 2 }}>{error}</Alert>}
        {shown && (
          <>
            <Typography component="h2" variant="h6" sx={{ mt: 2 }}>{applied ? 'Imported' : 'Preview: nothing written yet'}</Typography>
            <Table size="small" aria-label="Import pages">
              <TableHead><TableRow><TableCell>Title</TableCell><TableCell>Slug</TableCell><TableCell>Action</TableCell><TableCell>URL</TableCell></TableRow></TableHead>
              <TableBody>
                {shown.pages.map((p) => (
                  <TableRow key={p.url}><TableCell>{p.title}</TableCell><TableCell>{p.slug}</TableCell><TableCell>{p.action}</TableCell><TableCell>{p.url}</TableCell></TableRow>
                ))}
              </TableBody>
            </Table>
          </>
        )}
      </CardContent>
    </Card>
  );
}
