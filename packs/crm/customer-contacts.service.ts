import { nowIso, type PackContext, type RequestContext } from '../../core/pack-api.js';
import { CustomerContactsRepository, type CustomerContact } from './customer-contacts.repository.js';

/** A recovered cart, as its reminder tells it. */
export interface CartReminder {
  customerRef: string;
  coupon: { code: string; percentOff: number; expiresAt: string } | null;
  message: string;
}

/**
 * Customers' contact addresses (the customerRef itself is never an address) and the cart reminders mailed to
 * them: the cart recovery mails each recovered cart's message to its customer's address when the customer
 * agreed to cart reminders, in the transaction that claims the cart, so a cart is mailed once.
 */
export class CustomerContactsService {
  private readonly repository: CustomerContactsRepository;

  constructor(private readonly pack: PackContext) {
    this.repository = new CustomerContactsRepository(pack.db);
  }

  get(rc: RequestContext, customerRef: string): Promise<CustomerContact | null> {
    return this.repository.find(rc, customerRef);
  }

  put(rc: RequestContext, customerRef: string, input: { email: string; cartReminders: boolean }): Promise<CustomerContact> {
    return this.repository.upsert(rc, { customerRef, email: input.email, cartReminders: input.cartReminders, updatedAt: nowIso() });
  }

  async remove(rc: RequestContext, customerRef: string): Promise<{ deleted: number }> {
    return { deleted: await this.repository.delete(rc, customerRef) };
  }

  /**
   * Queues the reminders of recovered carts whose customers take cart reminders (one look-up for the batch, one
   * mail job each), in the caller's transaction: the recovery's, which claims the carts. Returns the customers mailed.
   */
  async remind(rc: RequestContext, carts: CartReminder[]): Promise<Set<string>> {
    const addresses = await this.repository.reminded(rc, carts.filter((c) => c.coupon).map((c) => c.customerRef));
    for (const cart of carts) {
      const to = addresses.get(cart.customerRef);
      if (!to || !cart.coupon) continue;
      await this.pack.mail.enqueue(rc, {
        to,
        subject: `Your cart is waiting: ${cart.coupon.percentOff}% off with ${cart.coupon.code}`,
        text: `${cart.message}\n\nThe code ${cart.coupon.code} is yours alone and works once, until ${cart.coupon.expiresAt.slice(0, 10)}.`,
        reference: 'crm.cart.reminder',
      });
    }
    return new Set(addresses.keys());
  }
}
