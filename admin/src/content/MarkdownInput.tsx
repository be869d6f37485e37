import { useState } from 'react';
import { TextInput, useInput, type TextInputProps } from 'react-admin';
import { Box, Paper, Tab, Tabs } from '@mui/material';
import Markdown from 'react-markdown';

/** A Markdown field: write in a text area, see the rendered page beside it (react-markdown, no raw HTML). */
export default function MarkdownInput(props: TextInputProps) {
  const { field } = useInput({ source: props.source });
  const [tab, setTab] = useState(0);
  return (
    <Box sx={{ width: '100%' }}>
      <Tabs value={tab} onChange={(_, v) => setTab(v)} aria-label={`${String(props.label)}: write or preview`}>
        <Tab label="Write" />
        <Tab label="Preview" />
      </Tabs>
      <Box sx={{ display: 'grid', gridTemplateColumns: { md: '1fr 1fr' }, gap: 2 }}>
        <Box sx={{ display: { xs: tab === 0 ? 'block' : 'none', md: 'block' } }}>
          <TextInput {...props} multiline minRows={8} fullWidth />
        </Box>
        <Paper variant="outlined" sx={{ p: 2, display: { xs: tab === 1 ? 'block' : 'none', md: 'block' }, overflow: 'auto' }} aria-label="Preview" data-testid="markdown-preview">
          <Markdown>{String(field.value ?? '')}</Markdown>
        </Paper>
      </Box>
    </Box>
  );
}
