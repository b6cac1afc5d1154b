// One run does what would otherwise be two tool calls and a round trip through the model:
// find the customer, then open a ticket for them, deciding the priority in code.
//   palisade types --policy examples/agents/support.toml -o sandbox.d.ts
//   tsc --noEmit --strict --target es2023 --module esnext sandbox.d.ts examples/agents/escalate.ts
type Input = { email: string; complaint: string };
type Customer = { id: string; plan: "free" | "pro" };

export default (async (input) => {
  const { email, complaint } = input as Input;
  const customer = (await crm.findCustomer({ email })) as Customer | null;
  if (customer === null) return { opened: false, reason: `no customer ${email}` };
  const ticket = (await crm.openTicket({
    customerId: customer.id,
    subject: complaint.slice(0, 80),
    priority: customer.plan === "pro" ? "urgent" : "normal",
  })) as { ticket: string };
  return { opened: true, ticket: ticket.ticket, customer: customer.id };
}) satisfies Sandbox.Main;
