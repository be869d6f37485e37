import { Title } from 'react-admin';
import { useNavigate } from 'react-router-dom';
import { Button, Card, CardContent, Typography } from '@mui/material';
import { api, OperationForm } from '../../../admin/src/pack-kit.js';
import type { Ticket } from './TicketPanel.js';

/** A new ticket: the form of POST /crm/support-tickets, generated from its body schema. */
export default function TicketCreate() {
  const navigate = useNavigate();
  return (
    <Card sx={{ mt: 2 }}>
      <Title title="New support ticket" />
      <CardContent>
        <Typography component="h2" variant="h6" gutterBottom>New support ticket</Typography>
        <OperationForm method="post" path="/crm/support-tickets" submit={async (body) => {
          const ticket = await api<Ticket>('/crm/support-tickets', { method: 'POST', body });
          navigate(`/crm.ticket/${ticket.id}/show`);
        }}>
          <Button type="submit" variant="contained">Open ticket</Button>
        </OperationForm>
      </CardContent>
    </Card>
  );
}
