! Fortran MPI: 3 Allreduce of one double, a Bcast of 4 integers, rank 0 sends 10 integers
! to rank 1 twice, a Barrier.
program fortran_mpi
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, i
  integer :: values(10), small(4)
  double precision :: x, y
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  do i = 1, 3
    x = rank
    call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  small = rank
  call MPI_Bcast(small, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  values = rank
  do i = 1, 2
    if (rank == 0) then
      call MPI_Send(values, 10, MPI_INTEGER, 1, i, MPI_COMM_WORLD, ierr)
    else if (rank == 1) then
      call MPI_Recv(values, 10, MPI_INTEGER, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    end if
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program fortran_mpi
