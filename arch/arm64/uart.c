/*
 * uart.c - PL011 console: polled transmit, polled receive.  The base address comes from the
 * device tree (platform.uart_base) and is mapped with ioremap before uart_init.
 */
#include <stdint.h>
#include <arch/arch.h>

#define UART_DR 0x00
#define UART_FR 0x18
#define UART_FR_TXFF (1 << 5)
#define UART_FR_RXFE (1 << 4)

static volatile uint8_t *uart;

void uart_init(uint64_t mmio_va)
{
	uart = (volatile uint8_t *)mmio_va;
}

void uart_putc(char c)
{
	if (!uart)
		return;
	while (*(volatile uint32_t *)(uart + UART_FR) & UART_FR_TXFF)
		;
	*(volatile uint32_t *)(uart + UART_DR) = (uint8_t)c;
}

int uart_getc(void)
{
	if (!uart || (*(volatile uint32_t *)(uart + UART_FR) & UART_FR_RXFE))
		return -1;
	return (int)(*(volatile uint32_t *)(uart + UART_DR) & 0xff);
}
