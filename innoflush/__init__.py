"""innoflush: InnoDB flush-method simulator and MySQL/MariaDB durability advisor."""

__version__ = "0.1.0"
