"""The stateful apps of our multi-turn suite: a notes app, a shopping cart, a calendar, a home.

Each app is a plain class as a user's app would have it: its state in attributes, its
operations as typed methods with docstrings, which ``Toolbox.from_object`` turns into tools
acting on the live object. An app is built from a JSON state (``App(**state)``) and reports
its state with ``snapshot()`` (not a tool: listed in ``__freyr_private__``), which the
conversation checker compares with a conversation's expected end state. Ids of new things are
deterministic (``note-4``, ``evt-7``, ``order-1``), so a conversation's expected calls can
name them. Written for this project; no app comes from a public benchmark.
"""

from __future__ import annotations

import copy
from typing import Any


class _App:
    """What every app shares: built from a state, reporting it back."""

    __freyr_private__ = ("snapshot",)

    def snapshot(self) -> dict[str, Any]:
        """The app's state as JSON."""
        return copy.deepcopy({k: v for k, v in vars(self).items() if not k.startswith("_")})


class Notes(_App):
    """A notes app: notes with a title, text, tags, and a pin."""

    __freyr_reads__ = ("list_notes", "read_note")

    def __init__(self, notes: list[dict[str, Any]] | None = None) -> None:
        self.notes = [dict(n) for n in notes or []]

    def list_notes(self, tag: str = "") -> list[dict[str, Any]]:
        """List the notes (id, title, tags, pinned), all of them or those with a tag.

        Args:
            tag: only notes with this tag; empty for all.
        """
        return [
            {k: n[k] for k in ("id", "title", "tags", "pinned")}
            for n in self.notes
            if not tag or tag in n["tags"]
        ]

    def read_note(self, note_id: str) -> dict[str, Any]:
        """Read one note in full.

        Args:
            note_id: the note's id, e.g. 'note-1'.
        """
        return dict(self._note(note_id))

    def create_note(self, title: str, text: str = "", tags: list[str] | None = None) -> str:
        """Create a note; returns its id.

        Args:
            title: the note's title.
            text: the note's text.
            tags: tags to file it under.
        """
        number = 1 + max((int(n["id"].split("-")[1]) for n in self.notes), default=0)
        note = {"id": f"note-{number}", "title": title, "text": text, "tags": list(tags or []),
                "pinned": False}  # fmt: skip
        self.notes.append(note)
        return f"created {note['id']}"

    def append_text(self, note_id: str, text: str) -> str:
        """Add text at the end of a note.

        Args:
            note_id: the note's id.
            text: the text to add.
        """
        note = self._note(note_id)
        note["text"] = f"{note['text']}\n{text}".strip()
        return f"{note_id} now reads: {note['text']}"

    def tag_note(self, note_id: str, tag: str) -> str:
        """Add a tag to a note.

        Args:
            note_id: the note's id.
            tag: the tag to add.
        """
        note = self._note(note_id)
        if tag not in note["tags"]:
            note["tags"].append(tag)
        return f"{note_id} tags: {', '.join(note['tags'])}"

    def pin_note(self, note_id: str, pinned: bool = True) -> str:
        """Pin a note to the top, or unpin it.

        Args:
            note_id: the note's id.
            pinned: true to pin, false to unpin.
        """
        self._note(note_id)["pinned"] = pinned
        return f"{note_id} {'pinned' if pinned else 'unpinned'}"

    def delete_note(self, note_id: str) -> str:
        """Delete a note.

        Args:
            note_id: the note's id.
        """
        self.notes.remove(self._note(note_id))
        return f"deleted {note_id}"

    def _note(self, note_id: str) -> dict[str, Any]:
        for note in self.notes:
            if note["id"] == note_id:
                return note
        raise ValueError(f"no note {note_id}; notes: {', '.join(n['id'] for n in self.notes)}")


class Cart(_App):
    """A shop's cart: products from a catalogue, lines in the cart, a coupon, orders."""

    __freyr_reads__ = ("search_products", "view_cart")

    def __init__(
        self,
        catalogue: list[dict[str, Any]],
        lines: list[dict[str, Any]] | None = None,
        coupons: dict[str, int] | None = None,
        addresses: dict[str, str] | None = None,
        coupon: str = "",
        orders: list[dict[str, Any]] | None = None,
    ) -> None:
        self.catalogue = [dict(p) for p in catalogue]
        self.lines = [dict(line) for line in lines or []]
        self.coupons = dict(coupons or {})
        self.addresses = dict(addresses or {})
        self.coupon = coupon
        self.orders = [dict(o) for o in orders or []]

    def search_products(self, query: str) -> list[dict[str, Any]]:
        """Find products whose name has the query's words.

        Args:
            query: words of the product's name.
        """
        words = query.casefold().split()
        return [p for p in self.catalogue if all(w in p["name"].casefold() for w in words)]

    def view_cart(self) -> dict[str, Any]:
        """The cart: its lines (sku, name, price, quantity), the coupon and the total."""
        return {"lines": self.lines, "coupon": self.coupon, "total": self._total()}

    def add_item(self, sku: str, quantity: int = 1) -> str:
        """Put a product in the cart.

        Args:
            sku: the product's sku, e.g. 'SKU-100'.
            quantity: how many.
        """
        product = self._product(sku)
        for line in self.lines:
            if line["sku"] == sku:
                line["quantity"] += quantity
                return f"{sku} x{line['quantity']} in the cart"
        self.lines.append({"sku": sku, "name": product["name"], "price": product["price"],
                           "quantity": quantity})  # fmt: skip
        return f"added {quantity} x {product['name']}"

    def remove_item(self, sku: str) -> str:
        """Take a product out of the cart.

        Args:
            sku: the product's sku.
        """
        line = self._line(sku)
        self.lines.remove(line)
        return f"removed {line['name']}"

    def set_quantity(self, sku: str, quantity: int) -> str:
        """Change how many of a product the cart holds.

        Args:
            sku: the product's sku.
            quantity: the new quantity, at least 1.
        """
        if quantity < 1:
            raise ValueError("quantity is at least 1; use remove_item to take it out")
        self._line(sku)["quantity"] = quantity
        return f"{sku} x{quantity}"

    def apply_coupon(self, code: str) -> str:
        """Apply a coupon code to the cart.

        Args:
            code: the coupon's code.
        """
        if code not in self.coupons:
            raise ValueError(f"coupon {code} is not valid")
        self.coupon = code
        return f"{code}: {self.coupons[code]} % off, total {self._total()}"

    def checkout(self, address: str) -> str:
        """Order what the cart holds, delivered to a saved address; empties the cart.

        Args:
            address: the saved address's name, e.g. 'home'.
        """
        if not self.lines:
            raise ValueError("the cart is empty")
        if address not in self.addresses:
            raise ValueError(f"no saved address {address}; saved: {', '.join(self.addresses)}")
        order = {"id": f"order-{len(self.orders) + 1}", "lines": self.lines,
                 "total": self._total(), "address": address}  # fmt: skip
        self.orders.append(order)
        self.lines, self.coupon = [], ""
        return f"{order['id']} placed: {order['total']} to {address}"

    def _total(self) -> float:
        total = sum(line["price"] * line["quantity"] for line in self.lines)
        off = self.coupons.get(self.coupon, 0)
        return round(total * (100 - off) / 100, 2)

    def _product(self, sku: str) -> dict[str, Any]:
        for product in self.catalogue:
            if product["sku"] == sku:
                return product
        raise ValueError(f"no product {sku}")

    def _line(self, sku: str) -> dict[str, Any]:
        for line in self.lines:
            if line["sku"] == sku:
                return line
        raise ValueError(f"{sku} is not in the cart")


class Calendar(_App):
    """A calendar: events with a title, a date, a start time, a length and guests."""

    __freyr_reads__ = ("list_events",)

    def __init__(self, events: list[dict[str, Any]] | None = None) -> None:
        self.events = [dict(e) for e in events or []]

    def list_events(self, date: str) -> list[dict[str, Any]]:
        """The events of one day.

        Args:
            date: the day, as YYYY-MM-DD.
        """
        return [e for e in self.events if e["date"] == date]

    def create_event(self, title: str, date: str, start: str, minutes: int = 60) -> str:
        """Add an event; returns its id.

        Args:
            title: what the event is.
            date: the day, as YYYY-MM-DD.
            start: the start time, as HH:MM (24-hour).
            minutes: how long it lasts.
        """
        number = 1 + max((int(e["id"].split("-")[1]) for e in self.events), default=0)
        event = {"id": f"evt-{number}", "title": title, "date": date, "start": start,
                 "minutes": minutes, "guests": []}  # fmt: skip
        self.events.append(event)
        return f"created {event['id']}"

    def move_event(self, event_id: str, date: str = "", start: str = "") -> str:
        """Move an event to another day or time.

        Args:
            event_id: the event's id, e.g. 'evt-1'.
            date: the new day (YYYY-MM-DD); empty keeps it.
            start: the new start time (HH:MM); empty keeps it.
        """
        event = self._event(event_id)
        event["date"] = date or event["date"]
        event["start"] = start or event["start"]
        return f"{event_id} now {event['date']} {event['start']}"

    def invite(self, event_id: str, email: str) -> str:
        """Invite someone to an event.

        Args:
            event_id: the event's id.
            email: the guest's email address.
        """
        event = self._event(event_id)
        if email not in event["guests"]:
            event["guests"].append(email)
        return f"invited {email} to {event_id}"

    def cancel_event(self, event_id: str) -> str:
        """Cancel an event.

        Args:
            event_id: the event's id.
        """
        self.events.remove(self._event(event_id))
        return f"cancelled {event_id}"

    def _event(self, event_id: str) -> dict[str, Any]:
        for event in self.events:
            if event["id"] == event_id:
                return event
        raise ValueError(f"no event {event_id}")


class Home(_App):
    """A smart home: lights per room, a thermostat, door locks and scenes."""

    __freyr_reads__ = ("get_status",)

    def __init__(
        self,
        lights: dict[str, dict[str, Any]],
        thermostat: float = 20.0,
        doors: dict[str, bool] | None = None,
        scenes: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.lights = {room: dict(light) for room, light in lights.items()}
        self.thermostat = thermostat
        self.doors = dict(doors or {})
        self.scenes = {name: dict(scene) for name, scene in (scenes or {}).items()}

    def get_status(self) -> dict[str, Any]:
        """Every light (on, brightness), the thermostat and which doors are locked."""
        return {"lights": self.lights, "thermostat": self.thermostat, "locked": self.doors}

    def set_light(self, room: str, on: bool, brightness: int = 100) -> str:
        """Switch a room's light on or off, and set its brightness.

        Args:
            room: the room.
            on: true for on, false for off.
            brightness: 1 to 100 percent, when on.
        """
        light = self._light(room)
        light["on"], light["brightness"] = on, brightness if on else 0
        return f"{room} light {'on at ' + str(brightness) + ' %' if on else 'off'}"

    def set_thermostat(self, celsius: float) -> str:
        """Set the thermostat.

        Args:
            celsius: the temperature to keep, 10 to 28.
        """
        if not 10 <= celsius <= 28:
            raise ValueError("the thermostat takes 10 to 28 degrees")
        self.thermostat = celsius
        return f"thermostat at {celsius} C"

    def lock(self, door: str, locked: bool = True) -> str:
        """Lock or unlock a door.

        Args:
            door: the door.
            locked: true to lock, false to unlock.
        """
        if door not in self.doors:
            raise ValueError(f"no door {door}; doors: {', '.join(self.doors)}")
        self.doors[door] = locked
        return f"{door} door {'locked' if locked else 'unlocked'}"

    def run_scene(self, name: str) -> str:
        """Run a saved scene (lights and thermostat at once).

        Args:
            name: the scene's name.
        """
        if name not in self.scenes:
            raise ValueError(f"no scene {name}; scenes: {', '.join(self.scenes)}")
        scene = self.scenes[name]
        for room, on in scene.get("lights", {}).items():
            self.set_light(room, on)
        if "thermostat" in scene:
            self.thermostat = scene["thermostat"]
        return f"scene {name} on"

    def _light(self, room: str) -> dict[str, Any]:
        if room not in self.lights:
            raise ValueError(f"no light in {room}; rooms: {', '.join(self.lights)}")
        return self.lights[room]


#: The apps by the name a conversation's ``toolbox`` gives.
APPS = {"notes": Notes, "cart": Cart, "calendar": Calendar, "home": Home}
